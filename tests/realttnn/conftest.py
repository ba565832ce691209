"""The real-ttnn contract lane: the real ttnn 0.81.1 from PyPI on a mock Blackhole p150.

Run it with the lane's own interpreter, built by ``tests/realttnn/setup``::

    PY=$(bash tests/realttnn/setup) && "$PY" -m pytest tests/realttnn

This conftest reads ``<repo>/.realttnn/env`` (written by setup) into ``os.environ`` before
anything imports ttnn, so every subprocess a test starts (probes, ``ttrecord run``) sees the
mock cluster descriptor and the scratch JIT cache.

When the lane is not set up, or this interpreter is not the lane's python (ttnn missing),
every test here is SKIPPED and the pytest header says why in capitals. Under ``CI=true`` (or
``RTTNN_REQUIRE=1``) the same condition is an error instead: a green CI always ran the lane.

Everything that touches a device runs in a subprocess (see ``run_py``): a device is opened
fresh for each probe, so addresses start from an empty allocator, and segfaults (any op inside
a capture on the mock device) cannot take pytest down.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
LANES = ROOT / ".realttnn"


def _this_lane() -> Path:
    """The lane whose python runs pytest: `.realttnn/X.Y.Z/` for an older ttnn release
    (`setup --ttnn X.Y.Z`), else `.realttnn/` (ttnn 0.81.1, the full lane)."""
    here = Path(sys.prefix).resolve().parent
    if here.parent == LANES.resolve() and (here / "env").is_file():
        return here
    return LANES


LANE = _this_lane()
ENV_FILE = LANE / "env"


def _read_env_file(path: Path) -> dict[str, str]:
    env: dict[str, str] = {}
    for line in path.read_text().splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("export "):
            line = line[len("export "):]
        key, _, value = line.partition("=")
        parts = shlex.split(value)
        env[key] = parts[0] if parts else ""
    return env


def _lane_problem() -> str | None:
    """Why the lane cannot run in this interpreter, or None when it can."""
    if not ENV_FILE.is_file() or not (LANE / "stamp").is_file():
        return f"the lane is not set up ({LANE} has no env/stamp): run  bash tests/realttnn/setup"
    try:
        import importlib.util

        if importlib.util.find_spec("ttnn") is None:
            return (f"ttnn is not importable by {sys.executable}; run the lane with the python "
                    f"that  bash tests/realttnn/setup  prints ({LANE}/venv/bin/python)")
    except Exception as exc:  # pragma: no cover - broken installs
        return f"cannot look up ttnn: {exc!r}"
    return None


LANE_PROBLEM = _lane_problem()
LANE_REQUIRED = os.environ.get("CI", "").lower() == "true" or os.environ.get("RTTNN_REQUIRE") == "1"
if LANE_PROBLEM is None:
    LANE_ENV = _read_env_file(ENV_FILE)
    os.environ.update(LANE_ENV)
    # The mock device loads no kernel binaries (test_kernel_binaries.py): the emulator, compared
    # with it here, leaves them out too, except where a test asks for the card's behaviour.
    os.environ["TTRECORD_EMULATOR_KERNEL_BINARIES"] = "0"
else:
    LANE_ENV = {}


def pytest_report_header(config):
    if LANE_PROBLEM is None:
        return [f"realttnn lane: ACTIVE (real ttnn on a mock p150; python {sys.executable})",
                f"realttnn lane: TT_METAL_MOCK_CLUSTER_DESC_PATH={LANE_ENV.get('TT_METAL_MOCK_CLUSTER_DESC_PATH')}"]
    return [f"realttnn lane: NOT SET UP -- ALL REAL-TTNN TESTS WILL BE "
            f"{'ERRORS (CI=true/RTTNN_REQUIRE=1)' if LANE_REQUIRED else 'SKIPPED'}: {LANE_PROBLEM}"]


def pytest_collection_modifyitems(config, items):
    if LANE_PROBLEM is None:
        return
    if LANE_REQUIRED:
        raise pytest.UsageError(
            f"realttnn lane required (CI=true or RTTNN_REQUIRE=1) but unusable: {LANE_PROBLEM}")
    marker = pytest.mark.skip(reason=f"REALTTNN LANE NOT SET UP: {LANE_PROBLEM}")
    for item in items:
        if str(item.fspath).startswith(str(HERE)):
            item.add_marker(marker)


# --- running code against the real library -----------------------------------------------

# Prepended to every probe: open a mock p150 and give the probe a tensor factory.
PROBE_PRELUDE = textwrap.dedent("""\
    import gc, json, sys
    import numpy as np
    import ttnn

    def emit(**kw):
        print("RESULT " + json.dumps(kw), flush=True)

    def open_dev():
        return ttnn.open_device(device_id=0, trace_region_size=1 << 20)

    def mk(dev, shape=(32, 32), mem=None, dtype=None, layout=None):
        return ttnn.Tensor(np.zeros(shape, dtype=np.float32), dtype or ttnn.bfloat16, dev,
                           layout or ttnn.TILE_LAYOUT, mem or ttnn.DRAM_MEMORY_CONFIG)
""")


class Probe:
    """A finished subprocess: return code, combined output, RESULT lines as dicts."""

    def __init__(self, proc: subprocess.CompletedProcess):
        self.returncode = proc.returncode
        self.stdout = proc.stdout
        self.stderr = proc.stderr
        self.output = proc.stdout + proc.stderr
        self.results = [json.loads(line[len("RESULT "):]) for line in proc.stdout.splitlines()
                        if line.startswith("RESULT ")]

    @property
    def result(self) -> dict:
        merged: dict = {}
        for r in self.results:
            merged.update(r)
        return merged

    def describe(self) -> str:
        tail = "\n".join(self.output.splitlines()[-40:])
        return f"returncode={self.returncode}\n--- last output lines ---\n{tail}"


@pytest.fixture
def lane_python() -> str:
    return sys.executable


@pytest.fixture
def run_py(tmp_path):
    """run_py(code, *, prelude=True, timeout=120, args=()) -> Probe, in a subprocess, cwd tmp_path.

    cwd matters: ttnn writes a ``generated/`` folder into the working directory.
    """

    def run(code: str, *, prelude: bool = True, timeout: float = 120, args=(), env=None) -> Probe:
        script = tmp_path / f"probe_{len(list(tmp_path.glob('probe_*.py')))}.py"
        script.write_text((PROBE_PRELUDE if prelude else "") + textwrap.dedent(code))
        full_env = dict(os.environ)
        full_env.update(env or {})
        proc = subprocess.run([sys.executable, "-X", "faulthandler", str(script), *args],
                              cwd=tmp_path, env=full_env, capture_output=True, text=True,
                              timeout=timeout)
        return Probe(proc)

    return run
