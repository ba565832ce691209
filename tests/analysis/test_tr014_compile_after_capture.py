"""TR014: a compile while a trace is live that left kernel-binary buffers behind."""

from ttrecord.events import Kind
from ttrecord.findings import Severity
from ttrecord.testing import SessionBuilder

from analysis_helpers import H, captured_step, rules_at

FAR = 0x900000  # nowhere near the trace's buffers


def _compile(b: SessionBuilder, line: int, binary_at: int | None, name: str = "ttnn.gelu"):
    """An eager op that compiled (the note) and left a buffer that is none of its outputs."""
    x = b.alloc(FAR + 0x10000 + line * 0x1000)
    out = b.alloc(FAR + 0x80000 + line * 0x1000)
    call = b.op(name, [x], [out], line=line)
    b._add(Kind.NOTE, "program_cache_miss", None, parent=call.seq, args={"new_entries": 1})
    if binary_at is not None:
        b.alloc(binary_at, size=4096, parent=call.seq)
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


def test_binaries_clear_of_the_trace_are_not_reported(analyze_both):
    """Binaries far from every range the live trace uses are harmless (tt-metal's executors
    compile their input copy after capture): no finding."""
    b = SessionBuilder()
    tid, x, w, y = captured_step(b, release=False)
    _compile(b, 40, binary_at=FAR)
    b.execute(tid, line=41)
    b.release(tid, line=42)
    assert analyze_both(b) == []


def test_compile_without_visible_binaries_is_not_reported(analyze_both):
    b = SessionBuilder()
    tid, x, w, y = captured_step(b, release=False)
    _compile(b, 40, binary_at=None)
    b.execute(tid, line=41)
    b.release(tid, line=42)
    assert analyze_both(b) == []


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
