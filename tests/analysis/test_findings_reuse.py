"""`ttrecord report` and the UI reuse stored findings only when the stamp stored with them (the
analysis version and the session's fingerprint) still matches; otherwise they recompute."""

import os
import sqlite3

import pytest

from ttrecord.cli.main import main
from ttrecord.events import SessionStatus
from ttrecord.analysis import check
from ttrecord.store import liveness
from ttrecord.store.reader import Session
from ttrecord.store.writer import replace_findings
from ttrecord.testing import SessionBuilder

from analysis_helpers import H, captured_step


def _session(tmp_path, hazard: bool = True) -> str:
    src = tmp_path / "model.py"
    src.write_text("\n".join(f"step_{i}()" for i in range(1, 41)) + "\n")
    b = SessionBuilder(file=str(src))
    tid, x, w, y = captured_step(b)
    if hazard:  # an allocation over trace memory, live across the replay: TR004
        kept = b.alloc(H, parent=b.h2d(None, line=30, name="from_torch").seq)
    for _ in range(3):
        b.execute(tid, line=31)
        b.d2h(y, line=32)
        if hazard:
            b.d2h(kept, line=33)  # reads what the replay overwrote
    b.release(tid, line=34)
    return b.write(tmp_path / "s.db")


@pytest.fixture
def analyses(monkeypatch):
    """Counts the analyses `report` runs (and still runs them)."""
    calls = []
    real = check.analyze_session

    def counting(session, on_step=None):
        calls.append(session.path)
        return real(session, on_step)

    monkeypatch.setattr(check, "analyze_session", counting)
    return calls


def test_report_after_check_reuses_the_findings_and_shows_the_same(tmp_path, capsys, analyses):
    # GIVEN a session whose first report analyses it (and stores what it found)
    path = _session(tmp_path)
    assert main(["report", path]) == 0
    fresh = capsys.readouterr().out
    assert len(analyses) == 1 and "TR004" in fresh
    # WHEN checked, then reported again
    assert main(["check", path]) == 1
    capsys.readouterr()
    analyses.clear()  # (check analyses through the same function)
    assert main(["report", path]) == 0
    # THEN the report did not analyse again and says exactly what the fresh one said
    assert analyses == []
    assert capsys.readouterr().out == fresh


def test_a_clean_session_checked_once_is_not_analysed_again(tmp_path, capsys, analyses):
    # GIVEN a session with no hazard, checked (no findings, but a current stamp)
    path = _session(tmp_path, hazard=False)
    assert main(["check", path]) == 0
    analyses.clear()
    # WHEN reported
    assert main(["report", path]) == 0
    # THEN nothing was recomputed and the report says no hazard
    assert analyses == []
    assert "No trace hazards found." in capsys.readouterr().out


def test_findings_of_another_analysis_version_are_recomputed(tmp_path, capsys, analyses, monkeypatch):
    # GIVEN findings checked by this version, and a report run by another one
    path = _session(tmp_path)
    assert main(["check", path]) == 1
    analyses.clear()
    monkeypatch.setattr(check, "analysis_version", lambda: "other-version")
    # WHEN reported THEN it analyses again
    assert main(["report", path]) == 0
    assert len(analyses) == 1 and "TR004" in capsys.readouterr().out


def test_findings_of_a_session_that_changed_since_are_recomputed(tmp_path, capsys, analyses):
    # GIVEN findings stored, then a wrong finding planted and the session changed (its status)
    path = _session(tmp_path)
    assert main(["check", path]) == 1
    analyses.clear()
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE findings SET title = 'planted'")
        conn.execute("UPDATE session SET status = 'crashed'")
    # WHEN reported
    assert main(["report", path]) == 0
    out = capsys.readouterr().out
    # THEN the findings were recomputed: the planted title is gone
    assert len(analyses) == 1
    assert "planted" not in out and "Allocation over trace memory" in out


def test_findings_stored_without_a_stamp_are_recomputed_by_report(tmp_path, capsys, analyses):
    # GIVEN findings stored by hand (no stamp: unknown analysis, unknown content)
    path = _session(tmp_path)
    replace_findings(path, [])
    with Session.open(path) as s:
        assert s.findings_stamp() is None
    # WHEN reported THEN the report analyses the session
    assert main(["report", path]) == 0
    assert len(analyses) == 1 and "TR004" in capsys.readouterr().out


def test_the_ui_reuses_current_findings_and_reanalyses_stale_ones(tmp_path):
    from ttrecord.tui.snapshots import overview

    # GIVEN a clean session checked once: current findings, none of them
    path = _session(tmp_path, hazard=False)
    assert main(["check", path]) == 0
    with Session.open(path) as s:
        # THEN the overview does not analyse again
        assert overview(s).needs_analysis is False
    # WHEN the session changes after the check
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE session SET exit_code = 3")
    with Session.open(path) as s:
        # THEN the overview analyses it again
        assert overview(s).needs_analysis is True


def test_a_session_still_being_recorded_gets_no_stored_findings(tmp_path, capsys):
    # GIVEN a session whose recording has not finished
    src = tmp_path / "model.py"
    src.write_text("step()\n" * 40)
    b = SessionBuilder(file=str(src))
    tid, x, w, y = captured_step(b)
    b.execute(tid, line=31)
    path = b.write(tmp_path / "s.db", status=SessionStatus.RUNNING)
    fd = liveness.lock_log(liveness.log_path(path))  # its recorder is alive
    # WHEN reported
    try:
        assert main(["report", path]) == 0
    finally:
        os.close(fd)
    # THEN the report is shown but nothing is stored (the session keeps changing)
    assert "RUNNING" in capsys.readouterr().out
    with Session.open(path) as s:
        assert s.findings_stamp() is None
