"""Ctrl-C: the program gets KeyboardInterrupt, the supervisor survives SIGINT and closes the
session as `interrupted` with every call recorded, and ttrecord exits 130."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

from tests.recorder.conftest import PROLOGUE, REPO, Recorded

pytestmark = pytest.mark.spawns

LOOP = PROLOGUE + """\
import os, time
a = tensor()
b = ttnn.add(a, a)
print(os.getpid(), flush=True)
while True:
    b = ttnn.add(a, a)
    time.sleep(0.01)
"""


@pytest.mark.parametrize("target", ["child", "group"])
def test_ctrl_c_closes_the_session(tmp_path, write_script, target):
    """GIVEN a program looping over ttnn calls WHEN SIGINT reaches the program (alone, or
    with the supervisor as a terminal's Ctrl-C does) THEN the session is interrupted, exit
    130, with a KeyboardInterrupt traceback, and every recorded call has ended."""
    script = write_script("loop.py", LOOP)
    out = tmp_path / "loop.db"
    proc = subprocess.Popen(
        [sys.executable, "-m", "ttrecord", "run", "--backend", "emulator", "-o", str(out),
         str(script)],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)}, start_new_session=True,
    )  # fmt: skip
    child_pid = int(proc.stdout.readline())
    if target == "child":
        os.kill(child_pid, signal.SIGINT)
    else:
        os.killpg(proc.pid, signal.SIGINT)
    _, stderr = proc.communicate(timeout=30)
    assert proc.returncode == 130, stderr
    rec = Recorded(subprocess.CompletedProcess([], 130, "", stderr), out)
    row = rec.session()
    assert (row["status"], row["error_type"], row["exit_code"]) == ("interrupted", "KeyboardInterrupt", 130)
    assert row["ended_at"] is not None and "KeyboardInterrupt" in row["traceback"]
    # the program's traceback shows the program's frames only: no proxy, emulator or runner
    frames = [ln for ln in stderr.splitlines() if ln.lstrip().startswith('File "')]
    assert frames and all(str(script) in ln for ln in frames), stderr
    adds = rec.rows("SELECT status FROM events WHERE name = 'add'")
    assert adds and all(r["status"] in ("ok", "raised") for r in adds)
