"""TR016 with a dynamic trace region (trace_region_size=0) and the table of ttnn's wordings of
"the trace does not fit": every known wording parses to its numbers, a refused dynamic trace
buffer is an error at open_device naming its placement and the mark it had to clear, and the
region account follows dynamic trace buffers (DRAM, top-down) across live traces."""

import pytest

from ttrecord.analysis.context import Context
from ttrecord.analysis.trace_region import detect, scan
from ttrecord.analysis.trace_region_messages import WORDINGS, parse
from ttrecord.emulator import errors
from ttrecord.events import BufferRef, Kind, Phase, SessionStatus
from ttrecord.findings import Severity
from ttrecord.testing import SessionBuilder

from analysis_helpers import W, X, rules_at

DRAM_TOP = 0xFF000000

# (text as ttnn raises it, kind, numbers): 0.81.1's mesh wording and its four dynamic ones (the
# emulator raises 0.81.1's texts, read from libtt_metal.so), and single-device tt-metal's
WORDED = [
    (str(errors.trace_region_too_small(36864, 1, 32768)), "region_full",
     {"needed": 36864, "device": 1, "allocated": 32768}),
    ("Always | FATAL | Creating trace buffers of size 751616B on device 0, but only 0B is allocated"
     " for trace region.", "region_full", {"needed": 751616, "device": 0, "allocated": 0}),
    (str(errors.trace_buffer_overlaps(100, 300, 200, 0)), "dynamic_capture_dram",
     {"address": 100, "allocation_mark": 300, "deletion_mark": 200}),
    (str(errors.trace_buffer_overlaps(100, 0, 200, 0)), "dynamic_deallocated",
     {"address": 100, "deletion_mark": 200}),
    (str(errors.trace_buffer_overlaps(100, 300, 0, 0)), "dynamic_allocated",
     {"address": 100, "allocation_mark": 300}),
    (str(errors.trace_buffer_overlaps(100, 0, 0, 400)), "dynamic_live_trace",
     {"address": 100, "live_trace_mark": 400}),
]  # fmt: skip


@pytest.mark.parametrize(("text", "kind", "values"), WORDED)
def test_each_known_wording_parses_to_its_numbers(text, kind, values):
    fit = parse(text)
    assert fit is not None and fit.kind == kind and fit.values == values
    assert fit.dynamic == kind.startswith("dynamic_")


def test_every_wording_of_the_table_is_exercised_and_others_are_not_recognised():
    assert {w.kind for w in WORDINGS} == {kind for _, kind, _ in WORDED}
    assert parse("Out of Memory: Not enough space to allocate 4096 B DRAM buffer") is None


def _dynamic_capture(b: SessionBuilder, line: int, address: int, per_bank: int = 1024) -> tuple[int, BufferRef]:
    x, w = b.alloc(X + line * 0x10000), b.alloc(W + line * 0x10000)
    b.op("ttnn.add", [x, w], [b.alloc(X + line * 0x10000 + 0x4000)], line=line + 1)  # prep
    tid = b.begin_trace(line=line)
    b.op("ttnn.add", [x, w], [b.alloc(X + line * 0x10000 + 0x8000)], line=line + 1)
    b.end_trace(tid, line=line + 2)
    end = b.events[-1].seq
    # with trace_region_size=0 the trace buffer is a DRAM buffer, a child of end_trace_capture
    buf = BufferRef(b.device, "DRAM", address, per_bank)
    b._add(Kind.ALLOC, "alloc", None, buffer=buf, trace=tid, parent=end, phase=Phase.CAPTURE)
    return tid, buf


def test_dynamic_trace_buffers_are_placed_and_counted_across_live_traces():
    b = SessionBuilder()
    b.open_device(line=5, trace_region_size=0)
    t0, buf0 = _dynamic_capture(b, 20, DRAM_TOP - 1024)
    t1, buf1 = _dynamic_capture(b, 30, DRAM_TOP - 2048)
    b.release(t0, line=40)
    b.free(buf0)
    t2, _ = _dynamic_capture(b, 50, DRAM_TOP - 1024, per_bank=512)
    (reg,) = scan(b.events).values()
    assert reg.dynamic and reg.size == 0
    assert {t: p.address for t, p in reg.placements.items()} == {
        t0: DRAM_TOP - 1024, t1: DRAM_TOP - 2048, t2: DRAM_TOP - 1024}
    assert reg.lowest == DRAM_TOP - 2048
    # high-water mark: both first traces live (2 x 1024 B per bank over 8 banks)
    assert reg.peak == 2 * 1024 * 8 and reg.used == (1024 + 512) * 8
    assert reg.sizes == {t0: 8192, t1: 8192, t2: 4096}


def test_refused_dynamic_trace_buffer_is_an_error_at_open_device(analyze_both):
    b = SessionBuilder()
    b.open_device(line=5, trace_region_size=0)
    _dynamic_capture(b, 20, DRAM_TOP - 1024)
    x = b.alloc(X + 0x800)
    tid = b.begin_trace(line=40)
    b.op("ttnn.relu", [x], [b.alloc(X + 0x1000)], line=41)
    b.end_trace(tid, line=42)
    b.raised(str(errors.trace_buffer_overlaps(DRAM_TOP - 3072, 0, 0, DRAM_TOP - 2048)))
    findings = analyze_both(b, status=SessionStatus.ERROR)
    assert rules_at(findings) == [("TR016", 5)]
    f = findings[0]
    assert f.severity is Severity.ERROR
    assert "end_trace_capture at model.py:42 found no room for its trace buffer" in f.message
    assert f"landed at {DRAM_TOP - 3072:#x}" in f.message
    assert "below DRAM a live trace's capture used" in f.message
    assert f"live trace buffers: trace 0 at {DRAM_TOP - 1024:#x}" in f.message
    assert f.evidence["dynamic"] is True and f.evidence["message"] == "dynamic_live_trace"
    assert "non-zero trace_region_size" in f.fix


def test_dynamic_region_is_never_nearly_full():
    b = SessionBuilder()
    b.open_device(line=5, trace_region_size=0)
    t0, _ = _dynamic_capture(b, 20, DRAM_TOP - 1024)
    b.execute(t0, line=30)
    assert detect(b.events, Context(b.events)) == []


def test_each_row_of_the_one_table_is_matched_by_its_own_text():
    """Every row of ttnn_versions.TRACE_FIT_WORDINGS (the one table TR016 reads) parses one of
    the texts above, and only that row's kind."""
    for row in WORDINGS:
        matched = [(text, kind) for text, kind, _ in WORDED if row.regex.search(text)]
        assert matched and all(kind == row.kind for _, kind in matched), row
