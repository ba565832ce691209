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


@pytest.fixture(autouse=True)
def evidence_as_declared(monkeypatch):
    """Every finding the detectors return in these tests carries only the evidence keys its
    rule declares (`Rule.evidence`, the table of docs/check-json.md), folded ones included."""
    import ttrecord.analysis as analysis
    from ttrecord.analysis.registry import rules
    from ttrecord.analysis.rules import undeclared_evidence

    real = analysis.run_detectors

    def checked(*args, **kwargs):
        findings = real(*args, **kwargs)
        for f in findings:
            for one in [{"rule": f.rule, "evidence": f.evidence}, *f.evidence.get("folded", [])]:
                rule = rules().get(one["rule"])
                if rule is not None:
                    assert undeclared_evidence(rule, one["evidence"]) == [], one["rule"]
        return findings

    monkeypatch.setattr(analysis, "run_detectors", checked)


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
