"""Bad input to `ttrecord run` / `ttrecord sessions` gives one clear line and exit 2 (125 for
`run`, whose own failures must not look like the program's exit 2), never a traceback, and
creates no session file."""

from __future__ import annotations

import pytest

from tests.recorder.conftest import run_ttrecord

pytestmark = pytest.mark.spawns


@pytest.mark.parametrize(
    "args, message",
    [
        (["run", "missing.py"], "missing.py: no such file"),
        (["run"], "no program given"),
        (["run", "-m", "no_such_module_xyz"], "no module named 'no_such_module_xyz'"),
        (["run", "--timeout", "-1", "x.py"], "must be positive"),
        (["run", "--timeout", "soon", "x.py"], "not a number"),
        (["run", "--backend", "gpu", "x.py"], "invalid choice: 'gpu'"),
        (["run", "--stack-depth", "x", "x.py"], "not an integer"),
        (["run", "-o", "nofolder/out.db", "x.py"], "nofolder: no such folder"),
        (["run", "."], ".: is a folder"),
        (["sessions", "nowhere"], "nowhere: no such folder"),
    ],
)
def test_bad_input_is_one_line_exit_2(tmp_path, args, message):
    """GIVEN bad arguments WHEN running ttrecord THEN it exits 2 (run: 125) with the message on
    stderr, no traceback, and no session file appears."""
    (tmp_path / "x.py").write_text("pass\n")
    proc = run_ttrecord(args, cwd=tmp_path)
    assert proc.returncode == (125 if args[0] == "run" else 2)
    assert message in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not list(tmp_path.glob("*.db"))


def test_a_backend_that_cannot_load_keeps_a_failed_session(tmp_path):
    """GIVEN --backend ttnn where ttnn cannot be imported WHEN running THEN it exits 125 with
    one line and no traceback, and the session stays, marked failed with the reason and
    naming no backend (a CI step reading it sees a failure, never a clean run)."""
    (tmp_path / "x.py").write_text("pass\n")
    proc = run_ttrecord(["run", "--backend", "ttnn", "-o", "x.db", "x.py"], cwd=tmp_path)
    assert proc.returncode == 125
    assert "--backend ttnn: cannot import ttnn" in proc.stderr
    assert "Traceback" not in proc.stderr
    import sqlite3

    with sqlite3.connect(tmp_path / "x.db") as conn:
        status, backend, reason = conn.execute(
            "SELECT status, backend, backend_reason FROM session").fetchone()
    assert (status, backend) == ("error", "none") and "cannot import ttnn" in reason


def test_run_tells_its_own_failure_from_the_programs_exit_2(tmp_path):
    """GIVEN a program that exits 2 and a run whose target is missing WHEN both run THEN the
    program's 2 passes through and ttrecord's own failure is 125 with a `ttrecord run:` line."""
    (tmp_path / "two.py").write_text("import sys\nsys.exit(2)\n")
    program = run_ttrecord(["run", "--backend", "emulator", "-o", "s.db", "two.py"], cwd=tmp_path)
    assert program.returncode == 2, program.stderr
    assert not any(ln.startswith("ttrecord run:") for ln in program.stderr.splitlines())
    own = run_ttrecord(["run", "--backend", "emulator", "-o", "s.db", "two.py"], cwd=tmp_path)
    assert own.returncode == 125  # s.db exists: refused without --force
    assert own.stderr.splitlines()[-1].startswith("ttrecord run: s.db exists")
