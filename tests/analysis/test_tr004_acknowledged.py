"""TR004 with ttnn's trace allocation tracker opt-outs: a post-capture buffer over trace memory
that the program acknowledged (`acknowledge_corruptible(tensor)`, or allocated inside
`corruptible_allocation_scope(device)`) is reported as info naming where, not as an error.
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
    _allocated_after_capture(b)
    b.execute(tid, line=32)
    b.release(tid, line=40)
    (f,) = analyze_both(b)
    assert (f.rule, f.severity) == ("TR004", Severity.ERROR)
    assert "acknowledged" not in f.message and "acknowledged" not in f.evidence


def test_scope_on_another_device_does_not_acknowledge(analyze_both):
    b = SessionBuilder()
    tid, *_ = captured_step(b)
    b.note("corruptible_scope_begin", line=28, args={"device": 7})
    _allocated_after_capture(b)
    b.note("corruptible_scope_end", line=28, args={"device": 7})
    b.execute(tid, line=32)
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
    _allocated_after_capture(b, line=33)
    b.execute(tid, line=34)
    b.release(tid, line=40)
    # THEN the new one, alive at the replay, is an error: the acknowledgement was not its
    (f,) = analyze_both(b)
    assert (f.rule, f.line, f.severity) == ("TR004", 33, Severity.ERROR)
