"""Rule: buffers a prep run allocated are marked as allocated in prep, so the HTML map's
"allocated in prep" colour (and the TUI) shows them."""

from __future__ import annotations

import sys
from pathlib import Path

from ttrecord.report.html_data import PHASES, build_payload
from ttrecord.store.reader import Session
from ttrecord.testing import SessionBuilder
import pytest

pytestmark = pytest.mark.slow

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "analysis"))
from analysis_helpers import captured_step  # noqa: E402


def test_prep_run_buffers_are_drawn_as_prep(tmp_path):
    b = SessionBuilder()
    captured_step(b)
    path = b.write(tmp_path / "s.db")
    with Session.open(path) as session:
        payload = build_payload(session)
    used = {PHASES[p] for m in payload["maps"] for p in m["phase"]}
    assert "prep" in used and "capture" in used
