"""`run -o/-f` never destroys what ttrecord did not create (issue problem 8)."""

from __future__ import annotations

import pytest
import os
import signal

from tests.reliability.conftest import (PROLOGUE, kill_quietly, run_cli, session_row, start_run,
                                        wait_dead)  # fmt: skip

pytestmark = pytest.mark.spawns

QUICK = PROLOGUE + "ttnn.relu(ttnn.Tensor(device))\nprint('done')\n"
LOOP = PROLOGUE + """\
import os, time
print(os.getpid(), flush=True)
while True:
    ttnn.relu(ttnn.Tensor(device))
    time.sleep(0.01)
"""


def _run(tmp_path, prog, *flags):
    return run_cli(tmp_path, "run", "--backend", "ttnn", *flags, str(prog))


def test_force_refuses_a_session_being_recorded(tmp_path, script):
    """GIVEN a run recording S.db WHEN another `run -f -o S.db` starts THEN it is refused and
    the live run's session and log stay intact."""
    out = tmp_path / "S.db"
    live = start_run(tmp_path, script(LOOP, "loop.py"), out)
    child = int(live.stdout.readline())
    try:
        other = _run(tmp_path, script(QUICK), "-f", "-o", str(out))
        assert other.returncode == 125 and "being recorded" in other.stderr, other.stderr
        assert "done" not in other.stdout
        assert (tmp_path / "S.db.log").exists()
        os.kill(live.pid, signal.SIGTERM)
        live.communicate(timeout=20)
    finally:
        kill_quietly(child)
    assert wait_dead(child)
    assert session_row(out)["status"] == "crashed"  # the live run's own end, SIGTERM


def test_force_refuses_a_file_that_is_not_a_session(tmp_path, script):
    """GIVEN a file that is not a ttrecord session WHEN `run -f -o FILE` THEN refused, file
    untouched."""
    notes = tmp_path / "notes.db"
    notes.write_text("my notes")
    proc = _run(tmp_path, script(QUICK), "-f", "-o", str(notes))
    assert proc.returncode == 125 and "not a ttrecord session" in proc.stderr
    assert notes.read_text() == "my notes"


def test_a_users_log_file_beside_the_target_is_kept(tmp_path, script):
    """GIVEN the user's own S.db.log WHEN `run -o S.db` THEN it is refused and the file kept."""
    mine = tmp_path / "S.db.log"
    mine.write_text("build log\n")
    proc = _run(tmp_path, script(QUICK), "-o", str(tmp_path / "S.db"))
    assert proc.returncode == 125 and "not a ttrecord event log" in proc.stderr, proc.stderr
    assert mine.read_text() == "build log\n"


def test_force_replaces_a_finished_session(tmp_path, script):
    """GIVEN a finished session WHEN `run -f -o` it again THEN it is replaced."""
    out = tmp_path / "S.db"
    assert _run(tmp_path, script(QUICK), "-o", str(out)).returncode == 0
    first = session_row(out)["id"]
    again = _run(tmp_path, script(QUICK), "-f", "-o", str(out))
    assert again.returncode == 0, again.stderr
    assert session_row(out)["id"] != first
