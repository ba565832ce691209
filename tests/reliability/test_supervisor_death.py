"""The program never outlives `ttrecord run`, and a session it left `running` is never read as
a clean run (issue problem 3: `timeout 8 ttrecord run …` left an orphan, a growing log and a
session that `check` passed)."""

from __future__ import annotations

import json
import os
import signal

from tests.reliability.conftest import (PROLOGUE, events, kill_quietly, run_cli, session_row, start_run,
                                        wait_dead)  # fmt: skip
import pytest

pytestmark = pytest.mark.spawns

LOOP = PROLOGUE + """\
import os, sys, time
t = ttnn.Tensor(device)
for _ in range(20):
    t = ttnn.relu(t)
print(os.getpid(), flush=True)
while True:
    t = ttnn.relu(t)
    time.sleep(0.002)
"""


def _child_pid(proc) -> int:
    return int(proc.stdout.readline())


def test_sigkill_of_the_supervisor_ends_the_program_and_readers_say_so(tmp_path, script):
    """GIVEN a looping program WHEN its `ttrecord run` is SIGKILLed THEN the program dies too,
    every reader says the recording stopped abnormally (check does not pass silently), and
    `ttrecord recover` finishes the session from its log."""
    out = tmp_path / "s.db"
    proc = start_run(tmp_path, script(LOOP), out)
    child = _child_pid(proc)
    try:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
        assert wait_dead(child), "the program outlived its supervisor"
    finally:
        kill_quietly(child)
    assert session_row(out)["status"] == "running"

    check = run_cli(tmp_path, "check", str(out))
    said = " ".join(check.stdout.split())
    assert "Partial recording: recording stopped abnormally" in said
    assert "run crashed" in said and "Traceback" not in check.stderr
    report = run_cli(tmp_path, "report", str(out))
    assert report.returncode == 0, report.stderr
    said = " ".join(report.stdout.split())
    assert "recording stopped abnormally" in said and "CRASHED" in said
    listing = run_cli(tmp_path, "sessions", str(tmp_path))
    said = " ".join(listing.stdout.split())
    assert "crashed" in said and "running" not in said
    assert "stopped abnormally" in said

    done = run_cli(tmp_path, "recover", str(out))
    assert done.returncode == 0, done.stderr
    row = session_row(out)
    assert row["status"] == "crashed" and row["ended_at"] is not None
    assert "recording stopped abnormally" in json.loads(row["options"])["recording_stopped"]
    assert not (tmp_path / "s.db.log").exists()
    relus = events(out, "name = 'relu'")
    assert len(relus) >= 20  # the calls came back from the log
    assert all(e["status"] in ("ok", "died") for e in relus)
    again = run_cli(tmp_path, "recover", str(out))
    assert again.returncode == 2 and "nothing to recover" in again.stderr


def test_sigterm_of_the_supervisor_is_forwarded_and_the_session_finished(tmp_path, script):
    """GIVEN a looping program WHEN `ttrecord run` gets SIGTERM (a CI timeout) THEN the program
    gets it once, ttrecord exits 143, and the session is final (crashed by signal 15)."""
    out = tmp_path / "s.db"
    proc = start_run(tmp_path, script(LOOP), out)
    child = _child_pid(proc)
    try:
        os.kill(proc.pid, signal.SIGTERM)
        _, err = proc.communicate(timeout=20)
    finally:
        kill_quietly(child)
    assert proc.returncode == 143, err
    assert wait_dead(child)
    row = session_row(out)
    assert (row["status"], row["signal"], row["exit_code"]) == ("crashed", 15, 143)
    assert not (tmp_path / "s.db.log").exists()


def test_sigterm_handled_by_the_program_runs_its_cleanup(tmp_path, script):
    """GIVEN a program with its own SIGTERM handler WHEN `ttrecord run` gets SIGTERM THEN the
    handler runs once, the program's exit code is kept and the session is ok."""
    prog = PROLOGUE + """\
import os, signal, sys, time
seen = []
signal.signal(signal.SIGTERM, lambda *a: seen.append(1))
print(os.getpid(), flush=True)
while not seen:
    time.sleep(0.01)
time.sleep(0.3)
ttnn.relu(ttnn.Tensor(device))
print("cleanup", len(seen), flush=True)
sys.exit(3)
"""
    out = tmp_path / "s.db"
    proc = start_run(tmp_path, script(prog), out)
    child = _child_pid(proc)
    try:
        os.kill(proc.pid, signal.SIGTERM)
        stdout, err = proc.communicate(timeout=20)
    finally:
        kill_quietly(child)
    assert proc.returncode == 3, err
    assert "cleanup 1" in stdout
    assert session_row(out)["status"] == "ok"
