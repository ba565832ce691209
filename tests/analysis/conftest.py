"""Helpers for detector tests: build a run with SessionBuilder, analyze it both ways.

Every case is analyzed twice: straight from the hand-built event list (`run_detectors`) and
from the session file the real writer makes of it (`analyze`, which loads only what the
detectors need and asks the file for the rest). Both must give the same findings.
"""

from __future__ import annotations

import pytest

from ttrecord.analysis import analyze, run_detectors
from ttrecord.analysis.context import Context
from ttrecord.events import SessionStatus
from ttrecord.findings import Finding
from ttrecord.store.reader import Session
from ttrecord.testing import SessionBuilder

from analysis_helpers import shape


@pytest.fixture
def analyze_both(tmp_path):
    counter = iter(range(1000))

    def run(b: SessionBuilder, status: SessionStatus = SessionStatus.OK) -> list[Finding]:
        direct = run_detectors(b.events, Context(b.events, status=str(status)))
        path = b.write(tmp_path / f"s{next(counter)}.db", status=status)
        with Session.open(path) as s:
            stored = analyze(s)
        assert shape(stored) == shape(direct)
        return stored

    return run
