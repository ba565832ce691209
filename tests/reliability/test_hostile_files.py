"""Readers never run what a session file holds and never wait on what is not a file (issue 36,
failures 4 and 5: `check` wrote findings back into the session, so a trigger in a crafted file
deleted every event and renamed the program; a view made of an endless query made readers use
gigabytes or hang; every reader hung on a FIFO named S.db, and so did `sessions DIR`)."""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
from pathlib import Path

import pytest

from tests.reliability.conftest import PROLOGUE, fake_env, run_cli, ttrecord_cmd

pytestmark = pytest.mark.spawns

PROGRAM = PROLOGUE + """\
t = ttnn.Tensor(device)
for i in range(50):
    t = ttnn.relu(t)
"""

# Statements a crafted file carries: triggers on every table a reader might write, and the
# `sources` table (which readers query) replaced by a view over an endless recursive query.
CRAFTED = [
    "CREATE TRIGGER wipe_on_delete AFTER DELETE ON findings BEGIN DELETE FROM events;"
    " UPDATE session SET script = 'pwned'; END",
    "CREATE TRIGGER wipe_on_insert AFTER INSERT ON findings BEGIN DELETE FROM events;"
    " UPDATE session SET script = 'pwned'; END",
    "CREATE TABLE IF NOT EXISTS findings_stamp (analysis_version TEXT, fingerprint TEXT,"
    " stored_at REAL)",
    "CREATE TRIGGER wipe_on_stamp AFTER INSERT ON findings_stamp BEGIN DELETE FROM events; END",
    "DROP TABLE sources",
    "CREATE VIEW sources AS WITH RECURSIVE r(n, file, text) AS (SELECT 0, 'x', zeroblob(1000000)"
    " UNION ALL SELECT n + 1, file, text FROM r) SELECT file, text FROM r",
    "CREATE VIEW blobs AS WITH RECURSIVE r(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM r)"
    " SELECT zeroblob(100000000) FROM r",
]


@pytest.fixture(scope="module")
def session(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("hostile")
    (folder / "prog.py").write_text(PROGRAM)
    out = folder / "s.db"
    proc = subprocess.run(ttrecord_cmd("run", "--backend", "ttnn", "-o", str(out), "prog.py"),
                          cwd=folder, env=fake_env(folder), capture_output=True, text=True,
                          timeout=120)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    return out


def _state(db: Path) -> tuple[int, str]:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return (conn.execute("SELECT count(*) FROM events").fetchone()[0],
                conn.execute("SELECT script FROM session").fetchone()[0])
    finally:
        conn.close()


READERS = [
    ("check",), ("check", "--format", "json"), ("check", "--format", "sarif"), ("report",),
    ("report", "--format", "json"), ("export", "perfetto", "-o", "out.json"),
]


@pytest.mark.parametrize("statements", [CRAFTED[:4], CRAFTED], ids=["triggers", "triggers+views"])
def test_no_statement_of_a_crafted_file_runs(session, tmp_path, statements):
    """GIVEN a session carrying triggers on the findings tables and endless views WHEN every
    reader (check, which stores findings, included) runs on it THEN no event is deleted, the
    program's name is unchanged, and each reader ends in bounded time without a traceback."""
    crafted = tmp_path / "s.db"
    shutil.copy(session, crafted)
    conn = sqlite3.connect(crafted, isolation_level=None)
    for statement in statements:
        conn.execute(statement)
    conn.close()
    before = _state(crafted)
    for args in READERS:
        proc = run_cli(tmp_path, *args[:1], *(args[1:2] if args[0] == "export" else ()),
                       str(crafted), *(args[2:] if args[0] == "export" else args[1:]),
                       timeout=60)  # fmt: skip
        assert "Traceback" not in proc.stderr, (args, proc.stderr[-2000:])
        assert proc.returncode in (0, 1, 2, 3, 4), (args, proc.returncode, proc.stderr[-2000:])
        assert _state(crafted) == before, args
        if len(statements) == 4 and args == ("check",):  # readable: check tried to store
            assert "findings not stored" in proc.stderr and "trigger" in proc.stderr
    listing = run_cli(tmp_path, "sessions", str(tmp_path), timeout=60)
    assert "Traceback" not in listing.stderr
    assert _state(crafted) == before


def _fifo(path: Path) -> None:
    os.mkfifo(path)


@pytest.mark.parametrize("args", [("check",), ("report",), ("report", "--html", "-o", "r.html"),
                                  ("recover",), ("diff",)])  # fmt: skip
def test_fifo_named_like_a_session_is_refused_at_once(tmp_path, args):
    """GIVEN a FIFO named S.db WHEN a reader is pointed at it THEN one line, exit 2, no wait."""
    fifo = tmp_path / "S.db"
    _fifo(fifo)
    argv = [args[0], str(fifo), *args[1:]]
    if args[0] == "diff":
        argv.append(str(fifo))
    proc = run_cli(tmp_path, *argv, timeout=20)
    assert proc.returncode == 2, (args, proc.stderr)
    assert "not a regular file" in proc.stderr, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr


def test_export_of_a_fifo_is_refused_at_once(tmp_path):
    fifo = tmp_path / "S.db"
    _fifo(fifo)
    proc = run_cli(tmp_path, "export", "perfetto", str(fifo), "-o", "x.json", timeout=20)
    assert proc.returncode == 2 and "not a regular file" in proc.stderr, proc.stderr


def test_sessions_folder_with_a_fifo_lists_the_others(session, tmp_path):
    """GIVEN a folder holding a session and a FIFO named B.db WHEN listed THEN the listing
    ends at once and shows the session."""
    shutil.copy(session, tmp_path / "a.db")
    _fifo(tmp_path / "b.db")
    proc = run_cli(tmp_path, "sessions", str(tmp_path), timeout=20)
    assert "a.db" in proc.stdout, proc.stderr
    assert "Traceback" not in proc.stderr


def test_fifo_as_a_running_sessions_log_does_not_hang_readers(session, tmp_path):
    """GIVEN a session left `running` whose log is a FIFO WHEN read THEN readers answer."""
    shutil.copy(session, tmp_path / "s.db")
    conn = sqlite3.connect(tmp_path / "s.db", isolation_level=None)
    conn.execute("UPDATE session SET status = 'running'")
    conn.close()
    _fifo(tmp_path / "s.db.log")
    for args in (("report",), ("sessions",)):
        target = str(tmp_path / "s.db") if args[0] == "report" else str(tmp_path)
        proc = run_cli(tmp_path, args[0], target, timeout=20)
        assert "Traceback" not in proc.stderr, proc.stderr
    proc = run_cli(tmp_path, "recover", str(tmp_path / "s.db"), timeout=20)
    assert "Traceback" not in proc.stderr, proc.stderr
    assert _state(tmp_path / "s.db")[0] > 0


@pytest.mark.parametrize("when", ["1e308", "-1e18", "'yesterday'"])
def test_sessions_listing_survives_a_bad_start_time(session, tmp_path, when):
    """GIVEN two sessions, one with an impossible start time WHEN the folder is listed THEN
    both are shown (issue 36, failure 10: one bad timestamp aborted the whole listing)."""
    shutil.copy(session, tmp_path / "a.db")
    shutil.copy(session, tmp_path / "b.db")
    conn = sqlite3.connect(tmp_path / "b.db", isolation_level=None)
    conn.execute(f"UPDATE session SET started_at = {when}")
    conn.close()
    proc = run_cli(tmp_path, "sessions", str(tmp_path), timeout=60)
    assert "a.db" in proc.stdout and "b.db" in proc.stdout, (proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr
