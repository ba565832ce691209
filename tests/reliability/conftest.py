"""Fixtures for the reliability tests: programs recorded against a fake `ttnn` (no torch), so
each run takes a fraction of a second and works under any Python."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.recorder.fake_backend import REPO, write_fake_ttnn

PROLOGUE = """\
import ttnn
device = ttnn.open_device(device_id=0)
"""


def fake_env(folder: Path) -> dict[str, str]:
    lib = write_fake_ttnn(folder / "_fake_lib")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(lib), str(REPO)])}
    env.pop("TTRECORD_EMULATOR_FAULT", None)
    env.pop("TTRECORD_KEEP_LOG", None)
    return env


def ttrecord_cmd(*args: str) -> list[str]:
    return [sys.executable, "-m", "ttrecord", *args]


def start_run(folder: Path, script: Path, out: Path, *flags: str, **kw) -> subprocess.Popen:
    """`ttrecord run --backend ttnn -o OUT SCRIPT` in the background (its own session)."""
    return subprocess.Popen(ttrecord_cmd("run", "--backend", "ttnn", "-o", str(out), *flags,
                                         str(script)),
                            cwd=folder, env=fake_env(folder), text=True,
                            stdout=kw.pop("stdout", subprocess.PIPE),
                            stderr=kw.pop("stderr", subprocess.PIPE),
                            start_new_session=kw.pop("start_new_session", True), **kw)  # fmt: skip


def run_cli(folder: Path, *args: str, timeout: float = 60, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(ttrecord_cmd(*args), cwd=folder, env=fake_env(folder), text=True,
                          capture_output=True, timeout=timeout, **kw)  # fmt: skip


def session_row(path: Path) -> dict:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    conn.row_factory = sqlite3.Row
    try:
        return dict(conn.execute("SELECT * FROM session").fetchone())
    finally:
        conn.close()


def events(path: Path, where: str = "1") -> list[dict]:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    conn.row_factory = sqlite3.Row
    try:
        return [dict(r) for r in conn.execute(f"SELECT * FROM events WHERE {where} ORDER BY seq")]
    finally:
        conn.close()


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie is dead for our purposes
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(") ")[1].split()[0] != "Z"
    except OSError:
        return False


def wait_dead(pid: int, timeout: float = 10) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not alive(pid):
            return True
        time.sleep(0.05)
    return False


@pytest.fixture
def script(tmp_path: Path):
    def write(text: str, name: str = "prog.py") -> Path:
        path = tmp_path / name
        path.write_text(text)
        return path

    return write


def kill_quietly(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
