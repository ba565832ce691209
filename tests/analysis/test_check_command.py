"""`ttrecord check`: exit status by fail level, output file, stored findings, bad input."""

import json

from ttrecord.cli.main import main
from ttrecord.store.reader import Session
from ttrecord.testing import SessionBuilder

from analysis_helpers import H, captured_step


def _session(tmp_path, hazard: str | None) -> str:
    b = SessionBuilder()
    tid, x, w, y = captured_step(b)
    if hazard == "error":  # allocation over the freed intermediate, live across a replay
        b.alloc(H, parent=b.h2d(None, line=30, name="from_torch").seq)
    b.execute(tid, line=31)
    if hazard == "warning":  # reads after the output was overwritten by later replays
        b.execute(tid, line=31)
        b.d2h(y, line=32)
        b.d2h(y, line=32)
    b.release(tid, line=33)
    return b.write(tmp_path / f"{hazard}.db")


def test_exit_status_follows_the_fail_level(tmp_path, capsys):
    assert main(["check", _session(tmp_path, None)]) == 0
    assert main(["check", _session(tmp_path, "error")]) == 1
    warning = _session(tmp_path, "warning")
    assert main(["check", warning]) == 0
    assert main(["check", warning, "--fail-on", "warning"]) == 1
    assert "No trace hazards found" in capsys.readouterr().out


def test_findings_are_stored_in_the_session_for_viewers(tmp_path, capsys):
    path = _session(tmp_path, "error")
    main(["check", path, "--format", "json"])
    printed = json.loads(capsys.readouterr().out)
    with Session.open(path) as s:
        stored = s.findings()
    assert [(f.rule, f.line) for f in stored] == [("TR004", 30)]
    assert printed["findings"][0]["evidence"] == stored[0].evidence


def test_output_file(tmp_path, capsys):
    out = tmp_path / "report.sarif"
    assert main(["check", _session(tmp_path, "error"), "--format", "sarif", "-o", str(out)]) == 1
    assert capsys.readouterr().out == ""
    assert json.loads(out.read_text())["runs"][0]["results"][0]["ruleId"] == "TR004"


def test_unusable_input_is_one_line_and_exit_2(tmp_path, capsys):
    not_a_session = tmp_path / "notes.db"
    not_a_session.write_text("hello")
    for path in (tmp_path / "missing.db", not_a_session):
        assert main(["check", str(path)]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and err.startswith("ttrecord check: ")
        assert "Traceback" not in err
