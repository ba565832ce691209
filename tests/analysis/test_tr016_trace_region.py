"""TR016: a capture that does not fit the trace region, a region nearly full."""

from ttrecord.events import BufferRef, Kind, Phase, SessionStatus
from ttrecord.findings import Severity
from ttrecord.testing import SessionBuilder

from analysis_helpers import W, X, rules_at, without_layout_luck

TOP = 0xFF000000  # a trace-region address (per bank)
MESSAGE = ("TT_FATAL: Creating trace buffers of size {}B on MeshDevice 0, but only {}B is"
           " allocated for trace region.")  # fmt: skip


def _capture(b: SessionBuilder, line: int, per_bank: int, address: int) -> tuple[int, object]:
    x, w = b.alloc(X + line * 0x10000), b.alloc(W + line * 0x10000)
    b.op("ttnn.add", [x, w], [b.alloc(X + line * 0x10000 + 0x4000)], line=line + 1)  # prep
    tid = b.begin_trace(line=line)
    b.op("ttnn.add", [x, w], [b.alloc(X + line * 0x10000 + 0x8000)], line=line + 1)
    b.end_trace(tid, line=line + 2)
    end = b.events[-1].seq
    # as recorded: a child of end_trace_capture; size is the per-bank footprint, pages unknown
    buf = BufferRef(b.device, "TRACE", address, per_bank)
    b._add(Kind.ALLOC, "alloc", None, buffer=buf, trace=tid, parent=end, phase=Phase.CAPTURE)
    return tid, buf


def test_capture_that_does_not_fit_is_an_error_at_open_device(analyze_both):
    b = SessionBuilder()
    b.open_device(line=5, trace_region_size=32768)
    _capture(b, 20, 3072, TOP)
    x = b.alloc(X + 0x800)
    tid = b.begin_trace(line=40)
    b.op("ttnn.relu", [x], [b.alloc(X + 0x1000)], line=41)
    b.end_trace(tid, line=42)
    b.raised(MESSAGE.format(36864, 32768))
    findings = analyze_both(b, status=SessionStatus.ERROR)
    assert rules_at(findings) == [("TR016", 5)]
    f = findings[0]
    assert f.severity is Severity.ERROR
    assert "end_trace_capture at model.py:42 needs 36,864 B (4,608 B per DRAM bank" in f.message
    assert "trace_region_size is 32,768 B (4,096 B per DRAM bank over 8 banks)" in f.message
    assert "live traces already hold 24,576 B (3,072 B per DRAM bank" in f.message
    assert f.evidence["needed"] == 36864 and f.evidence["region_per_bank"] == 4096
    assert "at least 36864" in f.fix


def test_region_above_90_percent_is_a_warning_with_sizes_per_trace(analyze_both):
    b = SessionBuilder()
    b.open_device(line=5, trace_region_size=32768)
    t0, buf0 = _capture(b, 20, 2048, TOP)
    t1, buf1 = _capture(b, 30, 1792, TOP + 2048)
    b.execute(t0, line=40)
    b.execute(t1, line=41)
    b.release(t0, line=42)
    b.free(buf0)
    b.release(t1, line=43)
    b.free(buf1)
    # (trace 1's tensors, made while trace 0 is live and kept past its replay: TR004 info)
    findings = without_layout_luck(analyze_both(b))
    assert [(f.rule, f.line, f.severity) for f in findings] == [("TR016", 5, Severity.WARNING)]
    msg = findings[0].message
    assert "30,720 B (3,840 B per DRAM bank over 8 banks), 94% of trace_region_size 32,768 B" in msg
    assert f"trace {t0}: 16,384 B, trace {t1}: 14,336 B" in msg


def test_released_trace_frees_its_share(analyze_both):
    """Two traces that would exceed 90% together, but never live at the same time."""
    b = SessionBuilder()
    b.open_device(line=5, trace_region_size=32768)
    t0, buf = _capture(b, 20, 2048, TOP)
    b.execute(t0, line=25)
    b.release(t0, line=26)
    b.free(buf)
    t1, buf1 = _capture(b, 30, 1792, TOP)
    b.execute(t1, line=35)
    b.release(t1, line=36)
    b.free(buf1)
    assert analyze_both(b) == []


def test_at_most_90_percent_is_clean(analyze_both):
    b = SessionBuilder()
    b.open_device(line=5, trace_region_size=32768)
    t0, buf = _capture(b, 20, 3584, TOP)  # 87.5%
    b.execute(t0, line=25)
    b.release(t0, line=26)
    b.free(buf)
    assert analyze_both(b) == []


def test_unknown_region_size_gives_no_warning(analyze_both):
    b = SessionBuilder()
    b.open_device(line=5, trace_region_size=None)
    t0, buf = _capture(b, 20, 4096, TOP)
    b.execute(t0, line=25)
    b.release(t0, line=26)
    b.free(buf)
    assert analyze_both(b) == []
