"""A `ttnn` module written into a folder, so `ttrecord run --backend ttnn` records a program
without torch (the emulator needs it) under any Python, including 3.12."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

FAKE_TTNN = f"""\
import sys as _sys
import warnings as _warnings
_sys.path.insert(0, {str(REPO)!r})
from tests.recorder.fake_ttnn import make as _make
globals().update({{k: v for k, v in vars(_make()).items() if not k.startswith("__")}})
del _make


def warn_inside(message="from inside ttnn", **kwargs):
    _warnings.warn(message, UserWarning, stacklevel=2, **kwargs)
    return 1


def echo(*args, **kwargs):
    return None


def fail(message):
    raise RuntimeError(message)


for _fn in (open_device, relu, gelu, to_torch, warn_inside, fail, echo):
    _fn.__module__ = "ttnn"
"""


def write_fake_ttnn(folder: Path) -> Path:
    """Write `ttnn.py` into `folder` (put it on PYTHONPATH); returns the folder."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "ttnn.py").write_text(FAKE_TTNN)
    return folder


def run_fake(args: list[str], cwd: Path, python: str = sys.executable, timeout: float = 60,
             **kw) -> subprocess.CompletedProcess:  # fmt: skip
    """`ttrecord ARGS` under `python` with the fake ttnn importable as `ttnn`."""
    lib = write_fake_ttnn(cwd / "_fake_lib")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(lib), str(REPO)])}
    env.pop("TTRECORD_EMULATOR_FAULT", None)
    return subprocess.run([python, "-m", "ttrecord", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=timeout, env=env, **kw)  # fmt: skip
