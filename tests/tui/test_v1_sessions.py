"""Sessions written by an earlier ttrecord stay readable: the two files in tests/fixtures were
recorded by schema version 1 (samples/alloc_after_capture.py and samples/address_drift.py on
the emulator, then checked) and are committed as they were written. Every reader opens them,
and none of them rewrites the file."""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from tui_pilot import settle, screen_text

from ttrecord.tui.app import TtrecordApp

pytestmark = pytest.mark.spawns

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ttrecord", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=120)  # fmt: skip


@pytest.fixture
def v1(tmp_path):
    for name in ("session_v1.db", "session_v1_drift.db"):
        shutil.copy(FIXTURES / name, tmp_path / name)
    return tmp_path


def _digest(path: Path) -> str:
    """The recording itself (check may store its findings beside it, as for any session)."""
    conn = sqlite3.connect(path)
    try:
        rows = [conn.execute("PRAGMA user_version").fetchall()]
        for table in ("session", "events", "tensors", "buffers", "traces", "devices", "callsites"):
            rows.append(conn.execute(f"SELECT * FROM {table} ORDER BY rowid").fetchall())
    finally:
        conn.close()
    return hashlib.sha256(repr(rows).encode()).hexdigest()


def test_check_reads_a_v1_session_without_rewriting_it(v1):
    """GIVEN a v1 session of alloc_after_capture.py WHEN checked as JSON with -o THEN the TR004
    at the sample's line is reported (exit 1), and the recording is left as it was (no
    upgrade in place)."""
    before = _digest(v1 / "session_v1.db")
    run = _cli("check", "session_v1.db", "--format", "json", cwd=v1)
    assert run.returncode == 1, run.stderr
    doc = json.loads(run.stdout)
    tr004 = [f for f in doc["findings"] if f["id"] == "TR004"]
    assert tr004 and tr004[0]["line"] == 35 and tr004[0]["file"].endswith("alloc_after_capture.py")
    assert _digest(v1 / "session_v1.db") == before


def test_report_reads_a_v1_session(v1):
    run = _cli("report", "session_v1.db", cwd=v1)
    assert run.returncode == 0, run.stderr
    assert "TR004" in run.stdout and "alloc_after_capture.py:35" in run.stdout


def test_diff_reads_two_captures_of_a_v1_session(v1):
    run = _cli("diff", "session_v1_drift.db:1", "session_v1_drift.db:2", "--format", "json", cwd=v1)
    assert run.returncode in (0, 1), run.stderr
    doc = json.loads(run.stdout)
    assert doc["alignment"]["matched"]["exact"] + doc["alignment"]["matched"]["signature"] == 3


async def test_the_ui_shows_a_v1_session(v1, monkeypatch):
    """GIVEN the v1 session WHEN opened in the UI THEN its TR004 finding is listed."""
    monkeypatch.chdir(v1)
    app = TtrecordApp([str(v1 / "session_v1.db")])
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        text = screen_text(app)
    assert "TR004" in text and "alloc_after_capture.py" in text
