"""TR002: a host-to-device write while a trace is being captured, at the write's line."""

from ttrecord.testing import SessionBuilder

from analysis_helpers import H, W, X, rules_at


def test_write_inside_capture_is_reported(analyze_both):
    # GIVEN copy_host_to_device_tensor called inside the captured region
    b = SessionBuilder()
    b.open_device()
    x, w = b.alloc(X), b.alloc(W)
    tid = b.begin_trace(line=20)
    b.h2d(x, line=10)
    b.raised("RuntimeError: TT_FATAL: Writes are not supported during trace capture. trace id: 0")
    h = b.alloc(H)
    b.op("ttnn.matmul", [x, w], [h], line=11)
    b.end_trace(tid, line=21)
    b.release(tid, line=22)
    # THEN TR002 at line 10 whose fix names copy_host_to_device_tensor outside the capture
    findings = analyze_both(b)
    assert rules_at(findings) == [("TR002", 10)]
    assert "copy_host_to_device_tensor" in findings[0].fix
    assert findings[0].severity.value == "error"


def test_input_refreshed_before_execute_is_not_reported(analyze_both):
    # GIVEN the fix: the copy into the captured input happens before execute_trace
    b = SessionBuilder()
    b.open_device()
    x, w = b.alloc(X), b.alloc(W)
    tid = b.begin_trace(line=20)
    h = b.alloc(H)
    b.op("ttnn.matmul", [x, w], [h], line=11)
    b.end_trace(tid, line=21)
    for _ in range(2):
        b.h2d(x, line=10)
        b.execute(tid, line=30)
        b.d2h(h, line=31)
    b.release(tid, line=32)
    assert analyze_both(b) == []
