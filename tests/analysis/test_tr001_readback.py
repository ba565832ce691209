"""TR001: a device-to-host read while a trace is being captured, at the read's line."""

from ttrecord.testing import SessionBuilder

from analysis_helpers import H, W, X, Y, rules_at


def _capture_with_read(b: SessionBuilder, raised: bool):
    b.open_device()
    x, w = b.alloc(X), b.alloc(W)
    tid = b.begin_trace(line=20)
    h = b.alloc(H)
    b.op("ttnn.matmul", [x, w], [h], line=10)
    b.d2h(h, line=11, name="to_torch")
    if raised:
        b.raised("RuntimeError: TT_FATAL: Reads are not supported during trace capture.")
    y = b.alloc(Y)
    b.op("ttnn.relu", [h], [y], line=12)
    b.end_trace(tid, line=21)
    return tid, y


def test_read_inside_capture_is_reported_at_its_line_with_the_tt_fatal(analyze_both):
    # GIVEN a capture whose second call reads an intermediate back (and raised, as on a card)
    b = SessionBuilder()
    tid, y = _capture_with_read(b, raised=True)
    b.execute(tid, line=30)
    b.release(tid, line=31)
    # WHEN analyzed THEN one TR001 at line 11, naming the trace and the error it raised
    findings = analyze_both(b)
    assert rules_at(findings) == [("TR001", 11)]
    (f,) = findings
    assert f.evidence["trace"] == tid and "Reads are not supported" in f.evidence["raised"]
    assert f.events[0] == next(e.seq for e in b.events if e.name == "to_torch")
    assert "after ttnn.execute_trace" in f.fix


def test_read_after_execute_trace_is_not_reported(analyze_both):
    # GIVEN the same program with the read moved after the replay (the fix)
    b = SessionBuilder()
    b.open_device()
    x, w = b.alloc(X), b.alloc(W)
    tid = b.begin_trace(line=20)
    h = b.alloc(H)
    b.op("ttnn.matmul", [x, w], [h], line=10)
    b.end_trace(tid, line=21)
    b.execute(tid, line=30)
    b.d2h(h, line=31)
    b.release(tid, line=32)
    # THEN nothing is reported
    assert analyze_both(b) == []


def test_nested_read_inside_one_user_call_counts_once(analyze_both):
    # GIVEN to_torch calling Tensor.cpu inside the capture (two d2h events, one user call)
    b = SessionBuilder()
    b.open_device()
    x = b.alloc(X)
    tid = b.begin_trace(line=20)
    outer = b.d2h(x, line=11, name="to_torch")
    b.d2h(x, line=11, name="Tensor.cpu", parent=outer.seq)
    b.end_trace(tid, line=21)
    b.release(tid, line=22)
    # THEN a single finding, pinned to the user's call
    findings = analyze_both(b)
    assert rules_at(findings) == [("TR001", 11)]
    assert findings[0].evidence["call"] == "to_torch"
