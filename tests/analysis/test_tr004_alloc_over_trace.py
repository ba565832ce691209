"""TR004: a buffer allocated after capture over a range the trace uses, live across a replay.

The trace below reads x (0x100000) and w (0x100800), creates h (0x101000, freed at the end of
the capture) and y (0x101800, kept). Only an allocation that overlaps one of those ranges on the
same device and buffer type, made while the trace is live and still allocated when
execute_trace runs, is a hazard. Severity follows consequence: an error when the program then
uses a value the replay changed (here: reads the new tensor after the replay), latent info when
nothing read it after the replay (consumed before it, or never).
"""

from ttrecord.events import CallSite
from ttrecord.findings import Severity
from ttrecord.testing import SessionBuilder

from analysis_helpers import H, Z, captured_step, rules_at


def _after_capture(alloc_address: int, buffer_type: str = "DRAM", free_before_execute: bool = False,
                   release_first: bool = False, size: int = 2048,
                   read_after: bool = True) -> SessionBuilder:  # fmt: skip
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
        if read_after and not free_before_execute:
            b.d2h(new, line=34)  # the program reads the tensor the replay wrote over
        b.release(tid, line=33)
    return b


def test_allocation_over_a_freed_intermediate_is_reported_with_both_ranges(analyze_both):
    # GIVEN a tensor allocated after capture on the address of the trace's freed intermediate
    findings = analyze_both(_after_capture(H))
    # THEN TR004 at the allocating call's line, showing the new range and the trace's range
    assert rules_at(findings) == [("TR004", 30)]
    assert findings[0].severity is Severity.ERROR
    ev = findings[0].evidence
    assert ev["corrupted"]["how"] == "host read" and ev["corrupted"]["replay"] < ev["corrupted"]["used"]
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


def test_allocation_clear_of_the_trace_alive_at_a_replay_is_layout_luck_info(analyze_both):
    """GIVEN a tensor allocated after capture at Z (0x102000), right above the trace's DRAM ranges
    (x, w, h, y: 0x100000..0x102000), still allocated at the replay THEN TR004 info: where the
    allocator put it, the trace's nearest range, and what would make the replay overwrite it."""
    findings = analyze_both(_after_capture(Z))
    assert [(f.rule, f.line, f.severity) for f in findings] == [("TR004", 30, Severity.INFO)]
    f = findings[0]
    assert "allocates DRAM [0x102000, 0x102800) on device 0 while trace 0 is live" in f.message
    assert ("placed it at DRAM [0x102000, 0x102800), clear of trace 0's DRAM memory on device 0"
            " ([0x100000, 0x102000) below it)") in f.message
    assert "the replay at model.py:32 neither read nor overwrote it" in f.message
    assert "more memory in use before it, or allocations in another order" in f.message
    # worded as ttnn 0.81.1 words it: the allocator's warning and the tracker's refusal
    assert "potentially unsafe due to the existence of an active trace" in f.message
    assert "still alive before trace replay" in f.message
    luck = f.evidence["layout_luck"]
    assert luck["count"] == 1 and luck["traces"] == [0]
    assert luck["clear_of"] == {"trace": 0, "ranges": 1, "span": "[0x100000, 0x102000)",
                                "nearest_below": "[0x100000, 0x102000)", "nearest_above": None}
    assert f.evidence["allocated"]["range"] == "[0x102000, 0x102800)"
    assert f.evidence["execute"]["at"] == "model.py:32"
    assert "trace_ranges" not in f.evidence and "corrupted" not in f.evidence


def test_staging_tensors_of_a_loop_are_one_info_with_the_count(analyze_both):
    """GIVEN a decode loop that makes a new host->device staging tensor each step, copies it
    into the captured input and replays, the staging tensor kept until the next step rebinds it
    THEN one grouped TR004 info for that call path with the step count (ttnn warns about the
    same allocations), never one per iteration, and no error or warning."""
    b = SessionBuilder()
    tid, x, w, y = captured_step(b)
    previous = None
    for step in range(6):
        maker = b.h2d(None, line=30, name="from_torch")
        staging = b.alloc(Z + (step % 2) * 0x800, parent=maker.seq)
        if previous is not None:
            b.free(previous)  # the name rebound: the previous step's staging tensor goes
        b.op("ttnn.copy", [staging, x], [x], line=31)
        b.execute(tid, line=32)
        b.d2h(y, line=33)
        previous = staging
    b.release(tid, line=34)
    findings = analyze_both(b)
    assert [(f.rule, f.line, f.severity) for f in findings] == [("TR004", 30, Severity.INFO)]
    assert findings[0].occurrences == 6
    assert findings[0].evidence["layout_luck"]["count"] == 6
    assert "did so 6 times" in findings[0].message


def test_layout_luck_is_one_info_per_call_path_not_per_line(analyze_both):
    """Two call paths through one helper line are two findings (each with its own count)."""
    b = SessionBuilder()
    tid, x, w, y = captured_step(b)
    for caller in (50, 60):
        for _ in range(2):
            site = CallSite(b.file, 30, "device_input", ((b.file, caller, "main"),))
            maker = b.h2d(None, line=30, name="from_torch", callsite=site)
            b.alloc(Z, parent=maker.seq)
            b.execute(tid, line=32)
            b.free(b.alloc(Z + 0x800))  # (a scratch freed before any replay: not reported)
    b.release(tid, line=34)
    findings = analyze_both(b)
    # each at its caller's line (the helper line kept as evidence), each with its own count
    assert sorted((f.rule, f.line, f.occurrences) for f in findings) == [("TR004", 50, 2), ("TR004", 60, 2)]
    assert all(f.severity is Severity.INFO and f.evidence["helper"].startswith("model.py:30") for f in findings)


def test_other_buffer_type_at_the_same_address_is_not_reported(analyze_both):
    assert analyze_both(_after_capture(H, buffer_type="L1")) == []


def test_allocation_freed_before_the_replay_is_not_reported(analyze_both):
    assert analyze_both(_after_capture(H, free_before_execute=True)) == []


def test_allocation_after_release_trace_is_not_reported(analyze_both):
    assert analyze_both(_after_capture(H, release_first=True)) == []


def test_allocation_never_read_after_the_replay_is_latent_info(analyze_both):
    # GIVEN the same overlap, but nothing reads the new tensor after the replay
    findings = analyze_both(_after_capture(H, read_after=False))
    # THEN TR004 is info, saying why this run was safe and what would corrupt it
    (f,) = findings
    assert (f.rule, f.line, f.severity) == ("TR004", 30, Severity.INFO)
    assert "Latent in this run" in f.message and "after a replay" in f.evidence["latent"]["would_corrupt"]
    assert "corrupted" not in f.evidence


def test_scratch_consumed_before_the_replay_and_dropped_later_is_info(analyze_both):
    # GIVEN a buffer allocated after capture over the trace's intermediate, copied into the
    # captured input and read by the host before the replay, still allocated at the replay
    # (a Python name rebound only after the next call returns), never read after it
    b = SessionBuilder()
    tid, x, w, y = captured_step(b)
    maker = b.h2d(None, line=30, name="from_torch")
    staging = b.alloc(H, size=2048, parent=maker.seq)
    b.op("ttnn.to_memory_config", [staging], [x], line=31)  # copied into the input (output_tensor=)
    b.d2h(staging, line=32)
    b.execute(tid, line=33)
    b.d2h(y, line=34)
    b.free(staging)
    b.release(tid, line=35)
    (f,) = analyze_both(b)
    assert (f.rule, f.line, f.severity) == ("TR004", 30, Severity.INFO)


def test_program_write_between_replays_then_read_is_an_error(analyze_both):
    # GIVEN the tensor written again after the first replay, then a second replay, then a read
    b = SessionBuilder()
    tid, *_ = captured_step(b)
    maker = b.h2d(None, line=30, name="from_torch")
    new = b.alloc(H, size=2048, parent=maker.seq)
    b.execute(tid, line=32)
    b.h2d(new, line=36)  # the program refills it: the first replay's damage is gone
    b.execute(tid, line=32)
    read = b.d2h(new, line=37)  # but the second replay wrote over it again before this read
    b.release(tid, line=40)
    (f,) = [f for f in analyze_both(b) if f.rule == "TR004"]
    assert f.severity is Severity.ERROR
    assert f.evidence["corrupted"]["used"] == read.seq


def test_value_used_only_through_an_op_whose_result_is_read_is_an_error(analyze_both):
    # GIVEN the overwritten tensor feeds an op after the replay, and that op's result is read
    from analysis_helpers import Z

    b = SessionBuilder()
    tid, *_ = captured_step(b)
    maker = b.h2d(None, line=30, name="from_torch")
    new = b.alloc(H, size=2048, parent=maker.seq)
    b.execute(tid, line=32)
    out = b.alloc(Z)
    b.op("ttnn.relu", [new], [out], line=38)
    b.d2h(out, line=39)
    b.release(tid, line=40)
    (f,) = analyze_both(b)
    assert (f.rule, f.severity) == ("TR004", Severity.ERROR)
    assert f.evidence["corrupted"]["how"] == "host read"
    assert "through 1 op" in f.message


def test_value_fed_to_an_op_whose_result_nobody_reads_is_latent(analyze_both):
    from analysis_helpers import Z

    b = SessionBuilder()
    tid, *_ = captured_step(b)
    maker = b.h2d(None, line=30, name="from_torch")
    new = b.alloc(H, size=2048, parent=maker.seq)
    b.execute(tid, line=32)
    out = b.alloc(Z)
    b.op("ttnn.relu", [new], [out], line=38)
    b.free(out)
    b.release(tid, line=40)
    (f,) = analyze_both(b)
    assert (f.rule, f.severity) == ("TR004", Severity.INFO)


def test_layout_luck_between_two_trace_ranges_names_both_neighbours(analyze_both):
    """GIVEN a trace whose DRAM ranges are x..y (0x100000..0x102000) and a kept buffer at 0x103000,
    and a tensor allocated after capture in the gap at 0x102800 THEN the info names the range
    below it and the one above it, and the span of all of them."""
    b = SessionBuilder()
    b.open_device()
    x, w, far = b.alloc(0x100000), b.alloc(0x100800), b.alloc(0x103000)
    b.op("ttnn.add", [x, w], [far], line=10)  # prep run
    tid = b.begin_trace(line=20)
    b.op("ttnn.add", [x, w], [far], line=10)
    b.end_trace(tid, line=21)
    maker = b.h2d(None, line=30, name="from_torch")
    b.alloc(0x101800, parent=maker.seq)
    b.execute(tid, line=32)
    b.release(tid, line=33)
    (f,) = analyze_both(b)
    assert (f.rule, f.line, f.severity) == ("TR004", 30, Severity.INFO)
    assert ("clear of trace 0's DRAM memory on device 0 (2 ranges within [0x100000, 0x103800);"
            " nearest [0x100000, 0x101000) below it and [0x103000, 0x103800) above it)") in f.message
    clear = f.evidence["layout_luck"]["clear_of"]
    assert (clear["nearest_below"], clear["nearest_above"]) == ("[0x100000, 0x101000)", "[0x103000, 0x103800)")
