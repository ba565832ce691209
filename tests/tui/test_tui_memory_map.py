"""The memory map marks buffers allocated over a live trace's ranges and still allocated when
it executes, and only those."""

from ttrecord.events import BufferRef
from ttrecord.store.reader import BufferRow, TraceRow
from ttrecord.tui.memlayout import build_maps


def _buf(id_, address, alloc, free=None, size=2048, btype="DRAM"):
    return BufferRow(id_, BufferRef(0, btype, address, size), alloc, free, "eager")


TRACE = TraceRow(id=1, device=0, trace_id=0, cq=0, begin_seq=10, end_seq=20, release_seq=50,
                 ops=2, executions=1)  # fmt: skip
CAPTURED = _buf(1, 0x1000, alloc=11, free=19)  # an intermediate the trace writes
INPUT = _buf(2, 0x3000, alloc=2)  # a trace input, still live


def _maps(*extra, executes=(30,)):
    buffers = [INPUT, CAPTURED, *extra]
    return build_maps(buffers, [TRACE], {1: [("out", 1), ("in", 2)]}, last_seq=60,
                      executes={1: list(executes)})  # fmt: skip


def test_allocation_after_capture_over_a_written_range_is_a_hazard():
    """GIVEN a buffer allocated after end_trace_capture on the trace's write range, before
    release WHEN the map is built THEN its bar carries the trace's 'writes' range."""
    (m,) = _maps(_buf(3, 0x1400, alloc=25, size=4096))
    bar = next(b for b in m.bars if b.buffer.id == 3)
    assert [(r.role, r.address) for r in bar.hazards] == [("writes", 0x1000)]
    assert m.hazard_count == 1


def test_allocations_before_capture_end_after_release_or_elsewhere_are_not():
    """GIVEN buffers allocated during capture, after release, on other addresses, on another
    buffer type, or freed before the trace executes WHEN the map is built THEN none is marked."""
    (m, _l1) = _maps(
        _buf(4, 0x1000, alloc=15), _buf(5, 0x1000, alloc=55), _buf(6, 0x8000, alloc=25),
        _buf(7, 0x1000, alloc=25, btype="L1"), _buf(8, 0x1000, alloc=22, free=28),
    )  # fmt: skip
    assert [b.buffer.id for b in m.bars if b.hazards] == []


def test_one_map_per_buffer_type_with_ranges_sorted_by_address():
    """GIVEN DRAM and L1 buffers WHEN the maps are built THEN there is one map per type and
    each map's bars run by address."""
    maps = _maps(_buf(9, 0x100, alloc=3, btype="L1"), _buf(10, 0x500, alloc=30))
    assert [m.title for m in maps] == ["device 0 · DRAM", "device 0 · L1"]
    dram = maps[0]
    assert [b.address for b in dram.bars] == sorted(b.address for b in dram.bars)
    assert [(g.roles, g.address) for g in dram.groups] == [("writes", 0x1000), ("reads", 0x3000)]
