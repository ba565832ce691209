"""TR014: a compile while a trace is live that left kernel-binary buffers behind."""

from ttrecord.events import Kind
from ttrecord.findings import Severity
from ttrecord.testing import SessionBuilder

from analysis_helpers import H, captured_step, rules_at

FAR = 0x900000  # nowhere near the trace's buffers


def _compile(b: SessionBuilder, line: int, binary_at: int | None, name: str = "ttnn.gelu"):
    """An eager op that compiled (the note) and left a buffer that is none of its outputs. Its
    input and output are freed right after it (kept, they would be TR004's layout luck)."""
    x = b.alloc(FAR + 0x10000 + line * 0x1000)
    out = b.alloc(FAR + 0x80000 + line * 0x1000)
    call = b.op(name, [x], [out], line=line)
    b._add(Kind.NOTE, "program_cache_miss", None, parent=call.seq, args={"new_entries": 1})
    if binary_at is not None:
        b.alloc(binary_at, size=4096, parent=call.seq)
    b.free(x)
    b.free(out)
    return call


def test_binaries_over_trace_memory_alive_at_a_replay_are_one_tr014_error(analyze_both):
    """GIVEN a compile after capture whose binary lands on the capture's freed intermediate WHEN
    the trace replays over it THEN one error, TR014 (not TR004), names the overlap and the replay."""
    b = SessionBuilder()
    tid, x, w, y = captured_step(b, release=False)
    _compile(b, 40, binary_at=H)  # over the capture's freed intermediate, alive at the replay
    b.execute(tid, line=41)
    b.release(tid, line=42)
    findings = analyze_both(b)
    assert [(f.rule, f.line, f.severity) for f in findings] == [("TR014", 40, Severity.ERROR)]
    assert "lies on memory trace 0 creates and reads" in findings[0].message
    assert "the replay at model.py:41 ran over it" in findings[0].message
    assert findings[0].evidence["overlaps_trace"] == 0


def test_binaries_over_trace_memory_never_replayed_are_a_warning(analyze_both):
    b = SessionBuilder()
    tid, x, w, y = captured_step(b, release=False)
    _compile(b, 40, binary_at=H)
    b.release(tid, line=42)
    findings = analyze_both(b)
    assert [(f.rule, f.severity) for f in findings] == [("TR014", Severity.WARNING)]


def test_binaries_clear_of_the_trace_are_latent_info_naming_both_ranges(analyze_both):
    """GIVEN a compile after capture whose binary lands far from every range the live trace uses
    WHEN the trace replays while the binary is allocated THEN one info (layout luck): where the
    binary landed, the trace's nearest range, and what would make it corrupt."""
    b = SessionBuilder()
    tid, x, w, y = captured_step(b, release=False)
    _compile(b, 40, binary_at=FAR)
    b.execute(tid, line=41)
    b.release(tid, line=42)
    findings = analyze_both(b)
    assert [(f.rule, f.line, f.severity) for f in findings] == [("TR014", 40, Severity.INFO)]
    f = findings[0]
    assert f"landed at DRAM [{FAR:#x}, {FAR + 4096:#x})" in f.message
    # the trace's DRAM ranges are x, w, h, y: 0x100000..0x102000, all below the binary
    assert "clear of trace 0's DRAM memory on device 0 ([0x100000, 0x102000) below it)" in f.message
    assert "the replay at model.py:41 did not overwrite them" in f.message
    assert "DRAM fuller" in f.message and "#54032" in f.message
    luck = f.evidence["layout_luck"]
    assert luck["count"] == 1 and luck["clear_of"]["trace"] == tid
    assert luck["clear_of"]["nearest_below"] == "[0x100000, 0x102000)"
    assert luck["clear_of"]["nearest_above"] is None
    assert f.evidence["binaries"] == [f"[{FAR:#x}, {FAR + 4096:#x})"]


def test_compile_without_visible_binaries_is_latent_info(analyze_both):
    """The 0.81.1 mock device loads no binaries: the compile itself is the latent hazard."""
    b = SessionBuilder()
    tid, x, w, y = captured_step(b, release=False)
    _compile(b, 40, binary_at=None)
    b.execute(tid, line=41)
    b.release(tid, line=42)
    findings = analyze_both(b)
    assert [(f.rule, f.line, f.severity) for f in findings] == [("TR014", 40, Severity.INFO)]
    assert "no kernel binaries were visible" in findings[0].message
    assert findings[0].evidence["binaries"] == []
    assert findings[0].evidence["replay"] == findings[0].events[-1]


def test_compile_with_no_replay_after_it_is_not_reported(analyze_both):
    """No replay of the live trace ran after the compile: nothing could overwrite its binaries."""
    b = SessionBuilder()
    tid, x, w, y = captured_step(b, release=False)
    b.execute(tid, line=39)
    _compile(b, 40, binary_at=None)
    b.release(tid, line=42)
    assert analyze_both(b) == []


def test_compiles_in_a_loop_are_one_info_per_call_path_with_the_count(analyze_both):
    """GIVEN a loop that compiles a new shape at one line on every step while the trace is live
    THEN one TR014 info for that call path, counting the steps (never one per iteration)."""
    b = SessionBuilder()
    tid, x, w, y = captured_step(b, release=False)
    for step in range(5):
        _compile(b, 40, binary_at=FAR + step * 0x2000)
        b.execute(tid, line=41)
    b.release(tid, line=42)
    findings = analyze_both(b)
    assert [(f.rule, f.line, f.severity) for f in findings] == [("TR014", 40, Severity.INFO)]
    assert findings[0].occurrences == 5
    assert findings[0].evidence["layout_luck"]["count"] == 5
    assert "did so 5 times" in findings[0].message


def test_compile_after_release_is_not_reported(analyze_both):
    b = SessionBuilder()
    tid, x, w, y = captured_step(b, release=False)
    b.execute(tid, line=41)
    b.release(tid, line=42)
    _compile(b, 50, binary_at=H)
    assert analyze_both(b) == []


def test_one_finding_per_call_site(analyze_both):
    b = SessionBuilder()
    tid, x, w, y = captured_step(b, release=False)
    _compile(b, 40, binary_at=H)
    b.execute(tid, line=41)
    _compile(b, 40, binary_at=H)
    b.release(tid, line=42)
    assert rules_at(analyze_both(b)) == [("TR014", 40)]
