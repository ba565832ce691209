"""A signal sent to the whole process group reaches the program once, and its cleanup runs to
its end (issue 36, failure 7: under `kill -INT -PGID` or `timeout` the program's handler ran
twice, since the supervisor forwarded what the kernel had already delivered to the group; with
`timeout -s INT` the second copy counted as a second Ctrl-C and the program was killed in its
cleanup)."""

from __future__ import annotations

import os
import signal
import subprocess
import time

import pytest

from tests.reliability.conftest import (
    PROLOGUE, fake_env, kill_quietly, session_row, start_run, ttrecord_cmd,
)

pytestmark = pytest.mark.spawns

# Counts each delivery of SIGNUM; the first starts a cleanup of CLEANUP seconds, then exits 5.
HANDLER = PROLOGUE + """\
import os, signal, sys, time
hits = []
def on_signal(signum, frame):
    hits.append(signum)
    if len(hits) == 1:
        time.sleep({cleanup})  # the program's cleanup (more signals may land meanwhile)
        time.sleep(0.5)  # room for a duplicate to arrive
        print("cleanup done, handler ran", len(hits), flush=True)
        sys.exit(5)
signal.signal({signum}, on_signal)
t = ttnn.Tensor(device)
print("ready", flush=True)
deadline = time.monotonic() + 60  # the program's own work; a signal ends it first
while time.monotonic() < deadline:
    t = ttnn.relu(t)
    time.sleep(0.01)
print("never interrupted", flush=True)
"""


def _wait_ready(proc: subprocess.Popen) -> None:
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert line.strip() == "ready", line


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_group_signal_reaches_the_program_once(tmp_path, script, signum):
    """GIVEN a program with a handler WHEN the signal is sent to the process group (kill -SIG
    -PGID) THEN the handler runs once and the program keeps its exit code."""
    prog = script(HANDLER.format(cleanup=0.2, signum=int(signum)))
    proc = start_run(tmp_path, prog, tmp_path / "s.db")
    try:
        _wait_ready(proc)
        os.killpg(proc.pid, signum)
        out, err = proc.communicate(timeout=30)
    finally:
        kill_quietly(proc.pid)
    assert "cleanup done, handler ran 1" in out, (out, err[-2000:])
    assert proc.returncode == 5, err[-2000:]
    assert session_row(tmp_path / "s.db")["exit_code"] == 5


def test_timeout_int_lets_a_two_second_cleanup_finish(tmp_path, script):
    """GIVEN `timeout -s INT` around `ttrecord run` WHEN it expires THEN the program's handler
    runs once and its 2 s cleanup completes (as under plain python)."""
    prog = script(HANDLER.format(cleanup=2.0, signum=int(signal.SIGINT)))
    cmd = ["timeout", "--preserve-status", "-s", "INT", "12",
           *ttrecord_cmd("run", "--backend", "ttnn", "-o", str(tmp_path / "s.db"), str(prog))]
    started = time.monotonic()
    proc = subprocess.run(cmd, cwd=tmp_path, env=fake_env(tmp_path), capture_output=True,
                          text=True, timeout=60)  # fmt: skip
    assert "cleanup done, handler ran 1" in proc.stdout, (proc.stdout, proc.stderr[-2000:])
    assert proc.returncode == 5, proc.stderr[-2000:]
    assert time.monotonic() - started >= 14.0  # 12 s, then the 2 s cleanup


def test_timeout_term_reaches_the_program_once(tmp_path, script):
    prog = script(HANDLER.format(cleanup=0.2, signum=int(signal.SIGTERM)))
    cmd = ["timeout", "--preserve-status", "12",
           *ttrecord_cmd("run", "--backend", "ttnn", "-o", str(tmp_path / "s.db"), str(prog))]
    proc = subprocess.run(cmd, cwd=tmp_path, env=fake_env(tmp_path), capture_output=True,
                          text=True, timeout=60)  # fmt: skip
    assert "cleanup done, handler ran 1" in proc.stdout, (proc.stdout, proc.stderr[-2000:])
    assert proc.returncode == 5, proc.stderr[-2000:]


def test_signal_to_the_supervisor_alone_is_still_forwarded_once(tmp_path, script):
    prog = script(HANDLER.format(cleanup=0.2, signum=int(signal.SIGTERM)))
    proc = start_run(tmp_path, prog, tmp_path / "s.db")
    try:
        _wait_ready(proc)
        os.kill(proc.pid, signal.SIGTERM)
        out, err = proc.communicate(timeout=30)
    finally:
        kill_quietly(proc.pid)
    assert "cleanup done, handler ran 1" in out, (out, err[-2000:])
    assert proc.returncode == 5
