"""Rule: `ttrecord sessions` lists the most recently started run first, whatever touched the
files since (a check stores findings, a copy resets the time)."""

from __future__ import annotations

import json
import os
import time

from ttrecord.cli.main import main
from ttrecord.testing import SessionBuilder
import pytest

pytestmark = pytest.mark.slow


def test_sessions_sort_by_start_time_not_file_time(tmp_path, capsys):
    # GIVEN an older run and a newer one, the older file touched last
    older = SessionBuilder().write(tmp_path / "older.db")
    time.sleep(0.05)
    SessionBuilder().write(tmp_path / "newer.db")
    later = time.time() + 100
    os.utime(older, (later, later))
    # WHEN listed
    assert main(["sessions", str(tmp_path), "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    # THEN the newer run comes first
    rows = doc["sessions"] if isinstance(doc, dict) else doc
    assert [os.path.basename(r["path"]) for r in rows] == ["newer.db", "older.db"]
