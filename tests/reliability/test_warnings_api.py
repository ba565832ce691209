"""The recorder's warnings.warn takes every argument the running Python's does (issue problem
1: on 3.12, `skip_file_prefixes`, which matplotlib passes, raised TypeError and killed the
program)."""

from __future__ import annotations

import inspect
import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from tests.recorder import fake_ttnn
from tests.recorder.fake_backend import REPO
from tests.recorder.inprocess import record_inprocess
from tests.reliability.conftest import PROLOGUE, fake_env, session_row

pytestmark = pytest.mark.spawns

PROGRAM = PROLOGUE + """\
import os, warnings
warnings.simplefilter("always")
t = ttnn.Tensor(device)
warnings.warn("from the program", UserWarning, skip_file_prefixes=(os.path.dirname(__file__),))
ttnn.warn_inside(skip_file_prefixes=("/nowhere",))
print("survived", flush=True)
"""


def test_hooked_warn_passes_skip_file_prefixes_through(tmp_path, monkeypatch):
    """GIVEN warnings.warn with 3.12's signature (a stand-in on older Pythons) WHEN the proxy is
    installed and the program passes skip_file_prefixes THEN the hook passes it on unchanged,
    inside and outside ttnn calls."""
    calls = []

    def warn_312(message, category=None, stacklevel=1, source=None, *, skip_file_prefixes=()):
        calls.append((str(message), skip_file_prefixes))

    monkeypatch.setattr(warnings, "warn", warn_312)
    fake = fake_ttnn.make()

    def body(ttnn) -> None:
        warnings.warn("outside", UserWarning, skip_file_prefixes=("/a",))
        ttnn.relu(ttnn.Tensor(ttnn.open_device()))

    record_inprocess(fake, body, tmp_path)
    assert calls == [("outside", ("/a",))]
    assert warnings.warn is warn_312  # uninstalled afterwards


def test_hooked_warn_accepts_every_parameter_of_this_pythons_warn(tmp_path):
    """GIVEN this Python's warnings.warn WHEN called through the hook with each of its
    parameters by keyword THEN none is refused."""
    params = inspect.signature(warnings.warn).parameters
    seen = {}

    def body(ttnn) -> None:
        hooked = warnings.warn
        kwargs = {"category": UserWarning, "stacklevel": 1, "source": None}
        if "skip_file_prefixes" in params:
            kwargs["skip_file_prefixes"] = (str(tmp_path),)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            hooked("through the hook", **kwargs)
        seen["n"] = len(caught)

    record_inprocess(fake_ttnn.make(), body, tmp_path)
    assert seen["n"] == 1


def _python_312() -> str | None:
    """A Python 3.12 with ttrecord's dependencies: the real-ttnn lane's, or TTRECORD_PY312."""
    for candidate in (os.environ.get("TTRECORD_PY312"), str(REPO / ".realttnn/venv/bin/python")):
        if candidate and Path(candidate).exists():
            version = subprocess.run([candidate, "-c", "import sys, wrapt, sqlite_utils, rich;"
                                      "print(sys.version_info[:2] >= (3, 12))"],
                                     capture_output=True, text=True)  # fmt: skip
            if version.stdout.strip() == "True":
                return candidate
    return sys.executable if sys.version_info >= (3, 12) else None


def test_program_passing_skip_file_prefixes_survives_on_312(tmp_path):
    """GIVEN Python 3.12+ and a program passing skip_file_prefixes (in its own code and inside a
    ttnn call) WHEN recorded THEN it runs to the end as under plain python."""
    python = _python_312()
    if python is None:
        pytest.skip("no Python 3.12 with ttrecord's dependencies (set TTRECORD_PY312)")
    prog = tmp_path / "prog.py"
    prog.write_text(PROGRAM)
    out = tmp_path / "s.db"
    proc = subprocess.run([python, "-m", "ttrecord", "run", "--backend", "ttnn", "-o", str(out),
                           str(prog)], cwd=tmp_path, env=fake_env(tmp_path), capture_output=True,
                          text=True, timeout=60)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "survived" in proc.stdout
    assert session_row(out)["status"] == "ok"
