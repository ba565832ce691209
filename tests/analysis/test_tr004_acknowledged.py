"""TR004 with ttnn's trace allocation tracker opt-outs: a post-capture buffer over trace memory
that the program acknowledged (`acknowledge_corruptible(tensor)`, or allocated inside
`corruptible_allocation_scope(device)`) is reported as info naming where, not as an error.
Without an opt-out it is an error when the program reads the buffer after the replay (the cases
below read it), and latent info otherwise (test_tr004_alloc_over_trace). An opt-out speaks for
the trace it was made for: an overlap with another live trace stays an error (tt-metal #57299).
"""

from ttrecord.findings import Severity
from ttrecord.testing import SessionBuilder

from analysis_helpers import H, captured_step, rules_at

ACK = "tools.trace_allocation_tracker.acknowledge_corruptible"


def _allocated_after_capture(b: SessionBuilder, line: int = 30):
    maker = b.h2d(None, line=line, name="from_torch")
    return b.alloc(H, size=2048, parent=maker.seq)


def test_acknowledged_buffer_is_info_naming_the_acknowledgement(analyze_both):
    # GIVEN a buffer over the trace's freed intermediate, acknowledged before the replay
    b = SessionBuilder()
    tid, *_ = captured_step(b)
    new = _allocated_after_capture(b)
    ack = b.op(ACK, [new], [], line=31)
    b.execute(tid, line=32)
    b.release(tid, line=40)
    findings = analyze_both(b)
    # THEN one TR004 at the allocating line, as info, saying it was acknowledged and where
    assert rules_at(findings) == [("TR004", 30)]
    (f,) = findings
    assert f.severity is Severity.INFO
    assert "acknowledged it as corruptible with `acknowledge_corruptible` at model.py:31" in f.message
    assert f.evidence["acknowledged"]["event"] == ack.seq
    assert ack.seq in f.events


def test_allocation_inside_a_corruptible_scope_is_info_naming_the_scope(analyze_both):
    b = SessionBuilder()
    tid, *_ = captured_step(b)
    b.note("corruptible_scope_begin", line=29, args={"device": 0})
    _allocated_after_capture(b)
    b.note("corruptible_scope_end", line=29, args={"device": 0})
    b.execute(tid, line=32)
    b.release(tid, line=40)
    (f,) = analyze_both(b)
    assert (f.rule, f.line, f.severity) == ("TR004", 30, Severity.INFO)
    assert "allocated it inside `corruptible_allocation_scope` at model.py:29" in f.message


def test_allocation_after_the_scope_closed_is_still_an_error(analyze_both):
    b = SessionBuilder()
    tid, *_ = captured_step(b)
    b.note("corruptible_scope_begin", line=28, args={"device": 0})
    b.note("corruptible_scope_end", line=28, args={"device": 0})
    new = _allocated_after_capture(b)
    b.execute(tid, line=32)
    b.d2h(new, line=35)  # the program reads what the replay overwrote
    b.release(tid, line=40)
    (f,) = analyze_both(b)
    assert (f.rule, f.severity) == ("TR004", Severity.ERROR)
    assert "acknowledged" not in f.message and "acknowledged" not in f.evidence


def test_scope_on_another_device_does_not_acknowledge(analyze_both):
    b = SessionBuilder()
    tid, *_ = captured_step(b)
    b.note("corruptible_scope_begin", line=28, args={"device": 7})
    new = _allocated_after_capture(b)
    b.note("corruptible_scope_end", line=28, args={"device": 7})
    b.execute(tid, line=32)
    b.d2h(new, line=35)
    b.release(tid, line=40)
    (f,) = analyze_both(b)
    assert f.severity is Severity.ERROR


def test_acknowledging_an_earlier_buffer_at_the_address_does_not_cover_a_new_one(analyze_both):
    # GIVEN a buffer acknowledged and freed, then a new buffer at the same address
    b = SessionBuilder()
    tid, *_ = captured_step(b)
    first = _allocated_after_capture(b, line=30)
    b.op(ACK, [first], [], line=31)
    b.free(first)
    new = _allocated_after_capture(b, line=33)
    b.execute(tid, line=34)
    b.d2h(new, line=35)
    b.release(tid, line=40)
    # THEN the new one, alive at the replay, is an error: the acknowledgement was not its
    (f,) = analyze_both(b)
    assert (f.rule, f.line, f.severity) == ("TR004", 33, Severity.ERROR)


def _two_traces(b: SessionBuilder) -> tuple[int, int]:
    """Trace 1 is the usual step (its intermediate h at H); trace 2 is captured later inside a
    `corruptible_allocation_scope` and touches only Z, far from H."""
    from analysis_helpers import Z

    tid, *_ = captured_step(b)
    b.note("corruptible_scope_begin", line=50, args={"device": 0})
    z = b.alloc(Z)
    tid2 = b.begin_trace(line=51)
    t = b.alloc(Z + 0x800)
    b.op("ttnn.relu", [z], [t], line=52)
    b.op("ttnn.relu", [t], [z], line=52)
    b.free(t)
    b.end_trace(tid2, line=53)
    return tid, tid2


def test_scope_around_another_capture_does_not_cover_an_overlap_with_a_live_trace(analyze_both):
    # GIVEN a scope around trace 2's capture, and an allocation in it over trace 1's intermediate
    b = SessionBuilder()
    tid, tid2 = _two_traces(b)
    new = _allocated_after_capture(b, line=54)
    b.note("corruptible_scope_end", line=50, args={"device": 0})
    b.execute(tid, line=60)
    b.d2h(new, line=61)
    b.release(tid2, line=62)
    b.release(tid, line=63)
    # THEN it stays an error: the scope acknowledged corruption by trace 2, not by trace 1
    (f,) = [f for f in analyze_both(b) if f.rule == "TR004"]
    assert (f.rule, f.line, f.severity, f.trace) == ("TR004", 54, Severity.ERROR, tid)
    assert f.evidence["acknowledged"]["covers_this_trace"] is False
    assert "for another trace" in f.message


def test_scope_covers_the_trace_captured_inside_it(analyze_both):
    # GIVEN a scope around trace 2's capture and an allocation in it over trace 2's range
    from analysis_helpers import Z

    b = SessionBuilder()
    tid, tid2 = _two_traces(b)
    maker = b.h2d(None, line=54, name="from_torch")
    new = b.alloc(Z + 0x800, size=2048, parent=maker.seq)  # over trace 2's intermediate
    b.note("corruptible_scope_end", line=50, args={"device": 0})
    b.execute(tid2, line=60)
    b.d2h(new, line=61)
    b.release(tid2, line=62)
    b.release(tid, line=63)
    findings = [f for f in analyze_both(b) if f.rule == "TR004"]
    assert [(f.line, f.severity, f.trace) for f in findings] == [(54, Severity.INFO, tid2)]
