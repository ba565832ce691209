"""`ttrecord check`: exit status by fail level, output file, stored findings, bad input."""

import json

from ttrecord.cli.main import main
from ttrecord.events import Kind
from ttrecord.store.reader import Session
from ttrecord.testing import SessionBuilder, host_tensor

from analysis_helpers import H, W, X, captured_step


def _session(tmp_path, hazard: str | None) -> str:
    b = SessionBuilder()
    tid, x, w, y = captured_step(b)
    if hazard == "error":  # allocation over the freed intermediate, live across a replay
        kept = b.alloc(H, parent=b.h2d(None, line=30, name="from_torch").seq)
    b.execute(tid, line=31)
    if hazard == "error":
        b.d2h(kept, line=35)  # reads what the replay overwrote
    b.release(tid, line=33)
    if hazard == "warning":  # work on host tensors inside a capture (TR008)
        return _host_op_in_capture().write(tmp_path / f"{hazard}.db")
    return b.write(tmp_path / f"{hazard}.db")


def _host_op_in_capture() -> SessionBuilder:
    b = SessionBuilder()
    b.open_device()
    x, w = b.alloc(X), b.alloc(W)
    tid = b.begin_trace(line=20)
    b._add(Kind.OP, "ttnn.to_layout", 12, inputs=(host_tensor(),), outputs=(host_tensor(),))
    b.op("ttnn.matmul", [x, w], [b.alloc(H)], line=11)
    b.end_trace(tid, line=21)
    b.release(tid, line=22)
    return b


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


def test_output_file_is_not_overwritten_without_force(tmp_path, capsys):
    session = _session(tmp_path, "error")
    out = tmp_path / "report.json"
    out.write_text("keep me")
    assert main(["check", session, "--format", "json", "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("ttrecord check: ") and "--force" in err
    assert out.read_text() == "keep me"
    # --force replaces only an earlier ttrecord output, never the user's file
    assert main(["check", session, "--format", "json", "-o", str(out), "--force"]) == 2
    assert "not written by ttrecord" in capsys.readouterr().err
    assert out.read_text() == "keep me"
    out.write_text('{\n  "version": 1,\n  "session": "earlier.db"\n}\n')
    assert main(["check", session, "--format", "json", "-o", str(out), "--force"]) == 1
    assert json.loads(out.read_text())["findings"][0]["id"] == "TR004"


def test_unusable_input_is_one_line_and_exit_2(tmp_path, capsys):
    not_a_session = tmp_path / "notes.db"
    not_a_session.write_text("hello")
    for path in (tmp_path / "missing.db", not_a_session):
        assert main(["check", str(path)]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and err.startswith("ttrecord check: ")
        assert "Traceback" not in err


def test_a_run_that_did_not_finish_is_said_first_and_exits_3(tmp_path, capsys):
    # GIVEN a clean capture recorded from a run that crashed afterwards
    from ttrecord.events import SessionStatus

    b = SessionBuilder()
    tid, x, w, y = captured_step(b)
    b.execute(tid, line=31)
    path = b.write(tmp_path / "crashed.db", status=SessionStatus.CRASHED)
    # WHEN checked THEN the text opens with the run's status, never claims "No trace hazards
    # found" flatly, and the exit status is 3 (documented), unless --allow-incomplete
    assert main(["check", path]) == 3
    out = capsys.readouterr().out
    assert out.startswith("The recorded run did not finish (status: crashed).")
    assert "No trace hazards found before the run stopped" in out
    assert main(["check", path, "--allow-incomplete"]) == 0
    capsys.readouterr()
    # AND an error finding still exits 1 (the worse verdict wins)
    b2 = SessionBuilder()
    tid, x, w, y = captured_step(b2)
    kept = b2.alloc(H, parent=b2.h2d(None, line=30, name="from_torch").seq)
    b2.execute(tid, line=31)
    b2.d2h(kept, line=35)  # the program reads what the replay overwrote
    assert main(["check", b2.write(tmp_path / "e.db", status=SessionStatus.ERROR)]) == 1


def test_fail_on_takes_the_plugin_choices(tmp_path, capsys):
    warning = _session(tmp_path, "warning")
    assert main(["check", warning, "--fail-on", "info"]) == 1
    assert main(["check", _session(tmp_path, "error"), "--fail-on", "never"]) == 0


def test_text_shows_the_caller_of_a_helper_line(tmp_path, capsys):
    # GIVEN an allocation over trace memory made inside a helper called from main
    from ttrecord.events import CallSite

    b = SessionBuilder()
    tid, x, w, y = captured_step(b)
    h2d = b.h2d(None, line=30, name="from_torch")
    h2d.callsite = CallSite("model.py", 30, "make_scratch", (("model.py", 77, "main"),))
    b.alloc(H, parent=h2d.seq)
    b.execute(tid, line=31)
    b.release(tid, line=33)
    main(["check", b.write(tmp_path / "helper.db")])
    out = capsys.readouterr().out
    # THEN both the helper's line and the caller's line, where the fix may go, are shown,
    # the caller's first: it is the line to change
    assert "model.py:30 in make_scratch" in out
    assert "change here: model.py:77 in main" in out
    assert out.index("model.py:77 in main") < out.index("model.py:30 in make_scratch")


def test_a_call_inside_installed_library_code_is_pinned_to_the_users_call(tmp_path, capsys):
    # GIVEN an allocation over trace memory made inside an installed executor class, called
    # from the user's script
    from ttrecord.events import CallSite

    lib = "/usr/lib/python3/site-packages/models/executor.py"
    b = SessionBuilder()
    tid, x, w, y = captured_step(b)
    h2d = b.h2d(None, line=30, name="from_torch")
    h2d.callsite = CallSite(lib, 120, "Executor.run", (("model.py", 77, "main"),))
    b.alloc(H, parent=h2d.seq)
    b.execute(tid, line=31)
    b.release(tid, line=33)
    main(["check", b.write(tmp_path / "lib.db"), "--format", "json"])
    (f,) = json.loads(capsys.readouterr().out)["findings"]
    # THEN the finding is at the user's line, with the library frame kept as the helper frame
    assert (f["file"], f["line"], f["function"]) == ("model.py", 77, "main")
    assert f["evidence"]["helper"] == f"{lib}:120 in Executor.run"
