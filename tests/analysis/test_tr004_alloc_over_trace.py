"""TR004: a buffer allocated after capture over a range the trace uses, live across a replay.

The trace below reads x (0x100000) and w (0x100800), creates h (0x101000, freed at the end of
the capture) and y (0x101800, kept). Only an allocation that overlaps one of those ranges on the
same device and buffer type, made while the trace is live and still allocated when
execute_trace runs, is a hazard.
"""

from ttrecord.testing import SessionBuilder

from analysis_helpers import H, Z, captured_step, rules_at


def _after_capture(alloc_address: int, buffer_type: str = "DRAM", free_before_execute: bool = False,
                   release_first: bool = False, size: int = 2048) -> SessionBuilder:  # fmt: skip
    b = SessionBuilder()
    tid, x, w, y = captured_step(b)
    if release_first:
        b.release(tid, line=29)
    maker = b.h2d(None, line=30, name="from_torch")  # the call that allocates the new tensor
    new = b.alloc(alloc_address, size=size, buffer_type=buffer_type, parent=maker.seq)
    if free_before_execute:
        b.free(new, parent=b.op("ttnn.deallocate", [new], [], line=31).seq)
    if not release_first:
        b.execute(tid, line=32)
        b.release(tid, line=33)
    return b


def test_allocation_over_a_freed_intermediate_is_reported_with_both_ranges(analyze_both):
    # GIVEN a tensor allocated after capture on the address of the trace's freed intermediate
    findings = analyze_both(_after_capture(H))
    # THEN TR004 at the allocating call's line, showing the new range and the trace's range
    assert rules_at(findings) == [("TR004", 30)]
    ev = findings[0].evidence
    assert ev["allocated"]["range"] == "[0x101000, 0x101800)"
    assert ev["allocated"]["address"] == "0x101000 (1052672)"
    (trace_range,) = ev["trace_ranges"]
    assert trace_range["range"] == "[0x101000, 0x101800)"
    assert any("ttnn.matmul" in use for use in trace_range["used_by"])
    assert ev["execute"]["at"] == "model.py:32"


def test_partial_overlap_counts(analyze_both):
    # GIVEN a 4 KiB allocation starting 1 KiB below h: [0x100c00, 0x101c00) covers part of h
    findings = analyze_both(_after_capture(H - 0x400, size=4096))
    assert rules_at(findings) == [("TR004", 30)]


def test_allocation_that_does_not_overlap_is_not_reported(analyze_both):
    assert analyze_both(_after_capture(Z)) == []


def test_other_buffer_type_at_the_same_address_is_not_reported(analyze_both):
    assert analyze_both(_after_capture(H, buffer_type="L1")) == []


def test_allocation_freed_before_the_replay_is_not_reported(analyze_both):
    assert analyze_both(_after_capture(H, free_before_execute=True)) == []


def test_allocation_after_release_trace_is_not_reported(analyze_both):
    assert analyze_both(_after_capture(H, release_first=True)) == []
