"""TR009: replaying a released or foreign trace, a trace never released, a capture never ended."""

from ttrecord.events import Kind, Phase, SessionStatus
from ttrecord.testing import SessionBuilder

from analysis_helpers import H, W, X, captured_step, rules_at


def test_execute_after_release_is_reported_at_the_execute(analyze_both):
    b = SessionBuilder()
    tid, x, w, y = captured_step(b)
    b.execute(tid, line=30)
    b.release(tid, line=31)
    b.execute(tid, line=32)
    b.raised("RuntimeError: TT_FATAL: Trace instance 0 must exist on Mesh device")
    findings = analyze_both(b)
    assert rules_at(findings) == [("TR009", 32)]
    assert "released at model.py:31" in findings[0].message


def test_trace_never_released_is_reported_at_its_capture(analyze_both):
    b = SessionBuilder()
    tid, x, w, y = captured_step(b)
    b.execute(tid, line=30)
    findings = analyze_both(b)
    assert rules_at(findings) == [("TR009", 20)]
    assert "release_trace" in findings[0].fix


def test_released_trace_is_not_reported(analyze_both):
    b = SessionBuilder()
    tid, x, w, y = captured_step(b)
    b.execute(tid, line=30)
    b.release(tid, line=31)
    assert analyze_both(b) == []


def test_capture_never_ended_is_reported_when_the_run_ended_normally(analyze_both):
    b = SessionBuilder()
    b.open_device()
    x, w = b.alloc(X), b.alloc(W)
    b.begin_trace(line=20)
    b.op("ttnn.matmul", [x, w], [b.alloc(H)], line=10)
    assert rules_at(analyze_both(b)) == [("TR009", 20)]


def test_capture_whose_end_raised_and_was_caught_is_not_never_ended(analyze_both):
    # GIVEN end_trace_capture raising (the trace did not fit its region) in a program that
    # catches the error and finishes normally
    b = SessionBuilder()
    b.open_device()
    x, w = b.alloc(X), b.alloc(W)
    tid = b.begin_trace(line=20)
    b.op("ttnn.matmul", [x, w], [b.alloc(H)], line=10)
    b.end_trace(tid, line=22)
    b.raised("RuntimeError: TT_FATAL: Creating trace buffers of size 8192B on MeshDevice 0,"
             " but only 4096B is allocated for trace region.")
    # THEN no TR009 "never ends": the capture was ended; ttnn's refusal is the mistake
    assert [f for f in analyze_both(b) if f.rule == "TR009"] == []


def test_crashed_run_inside_a_capture_is_not_a_lifecycle_error(analyze_both):
    b = SessionBuilder()
    b.open_device()
    x, w = b.alloc(X), b.alloc(W)
    b.begin_trace(line=20)
    b.op("ttnn.matmul", [x, w], [b.alloc(H)], line=10)
    b.raised("RuntimeError: boom")
    assert analyze_both(b, status=SessionStatus.ERROR) == []


def test_trace_replayed_on_another_device_is_reported(analyze_both):
    b = SessionBuilder()
    tid, x, w, y = captured_step(b)
    b._add(Kind.TRACE_EXECUTE, "execute_trace", 30, trace=tid, device=1, phase=Phase.REPLAY)
    b.release(tid, line=31)
    findings = analyze_both(b)
    assert rules_at(findings) == [("TR009", 30)]
    assert findings[0].evidence["captured_on"] == 0


def test_releasing_a_released_trace_again_is_info(analyze_both):
    # GIVEN tt-metal's idempotent-release test: release_trace twice on one trace
    b = SessionBuilder()
    tid, x, w, y = captured_step(b)
    b.execute(tid, line=30)
    b.release(tid, line=31)
    b.release(tid, line=32)
    findings = analyze_both(b)
    # THEN info at the second release, naming the first: nothing was replayed or freed twice
    assert [(f.rule, f.line, f.severity.value) for f in findings] == [("TR009", 32, "info")]
    assert "released at model.py:31" in findings[0].message


def test_releasing_a_trace_never_captured_is_an_error(analyze_both):
    b = SessionBuilder()
    b.open_device()
    b.release(5, line=32)
    findings = analyze_both(b)
    assert [(f.rule, f.line, f.severity.value) for f in findings] == [("TR009", 32, "error")]
