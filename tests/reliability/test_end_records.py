"""A call's end reaches the log when the call returns (issue problem 7: ends waited for the
next call, so a crash after the last call returned said it "died in relu")."""

from __future__ import annotations

import pytest

from tests.reliability.conftest import PROLOGUE, events, run_cli, session_row

CRASH_AFTER_CALL = PROLOGUE + """\
import os, signal
t = ttnn.relu(ttnn.Tensor(device))
os.kill(os.getpid(), signal.SIGKILL)  # dies between calls: no ttnn call is running
"""


@pytest.mark.spawns
def test_crash_between_calls_names_no_call(tmp_path, script):
    """GIVEN a program killed right after relu returned WHEN recorded THEN relu is ok with its
    end, the session is crashed with no call named, and the report blames no call."""
    out = tmp_path / "s.db"
    proc = run_cli(tmp_path, "run", "--backend", "ttnn", "-o", str(out), str(script(CRASH_AFTER_CALL)))
    assert proc.returncode == 137, proc.stderr
    row = session_row(out)
    assert (row["status"], row["last_call"]) == ("crashed", None)
    (relu,) = events(out, "name = 'relu'")
    assert relu["status"] == "ok" and relu["dur_ns"] is not None
    report = run_cli(tmp_path, "report", str(out))
    assert "died in" not in report.stdout, report.stdout
