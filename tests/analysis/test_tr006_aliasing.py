"""TR006: replay outputs read after later replays overwrote them; outputs written into inputs."""

from ttrecord.testing import SessionBuilder

from analysis_helpers import H, W, X, Y, captured_step, rules_at


def test_outputs_collected_over_replays_and_read_afterwards_are_reported(analyze_both):
    # GIVEN three replays with no read in between, then three reads of the same output
    b = SessionBuilder()
    tid, x, w, y = captured_step(b)
    for _ in range(3):
        b.h2d(x, line=30)
        b.execute(tid, line=31)
    for _ in range(3):
        b.d2h(y, line=32)
    b.release(tid, line=33)
    findings = analyze_both(b)
    # THEN one TR006 at the read line, saying three replays wrote the buffer
    assert rules_at(findings) == [("TR006", 32)]
    assert findings[0].evidence["replays_before_read"] == 3
    # AND it is an error: the reads used values later replays had overwritten
    assert findings[0].severity.value == "error"
    assert "consequence" in findings[0].evidence


def test_reading_each_replay_before_the_next_is_not_reported(analyze_both):
    b = SessionBuilder()
    tid, x, w, y = captured_step(b)
    for _ in range(3):
        b.h2d(x, line=30)
        b.execute(tid, line=31)
        b.d2h(y, line=32)
    b.release(tid, line=33)
    assert analyze_both(b) == []


def test_warm_up_replays_then_one_read_is_not_reported(analyze_both):
    b = SessionBuilder()
    tid, x, w, y = captured_step(b)
    for _ in range(5):
        b.execute(tid, line=31)
    b.d2h(y, line=32)
    b.release(tid, line=33)
    assert analyze_both(b) == []


def test_captured_op_writing_into_a_trace_input_is_reported(analyze_both):
    # GIVEN a capture that copies its result back into its own input x
    b = SessionBuilder()
    b.open_device()
    x, w = b.alloc(X), b.alloc(W)
    tid = b.begin_trace(line=20)
    h = b.alloc(H)
    b.op("ttnn.matmul", [x, w], [h], line=10)
    b.op("ttnn.copy", [h], [x], line=11)
    b.end_trace(tid, line=21)
    b.execute(tid, line=30)
    b.release(tid, line=31)
    findings = analyze_both(b)
    assert rules_at(findings) == [("TR006", 11)]
    assert findings[0].evidence["buffer"]["range"] == "[0x100000, 0x100800)"


def test_in_place_cache_update_is_not_reported(analyze_both):
    # GIVEN the sanctioned pattern: a KV cache updated in place inside the trace
    b = SessionBuilder()
    b.open_device()
    x, cache = b.alloc(X), b.alloc(Y)
    tid = b.begin_trace(line=20)
    b.op("ttnn.update_cache", [x], [cache], line=10)
    b.op("ttnn.matmul", [x, cache], [b.alloc(H)], line=11)
    b.end_trace(tid, line=21)
    b.execute(tid, line=30)
    b.release(tid, line=31)
    assert analyze_both(b) == []
