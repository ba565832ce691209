"""The memory map read straight from SQLite (plain rows, bars built on access, hazards found by
bisecting allocation order) is the map of the BufferRow path, and its hazards are exactly what
checking every buffer against every trace range finds."""

import random

import pytest

from ttrecord.store.reader import Session, trace_execute_rows
from ttrecord.testing import TILE_BYTES, SessionBuilder
from ttrecord.tui.memlayout import build_maps, buffers_by_trace, load_maps, trace_executions

BASE = 0x100000


def _session(path):
    """Traces that overlap in time (two captured before either is released), buffers of two
    types and two devices reusing a handful of addresses, some freed before a replay, some
    never freed."""
    rng = random.Random(7)
    b = SessionBuilder()
    b.open_device(line=1)
    live: list = []

    def churn(n):
        for _ in range(n):
            if live and rng.random() < 0.45:
                b.free(live.pop(rng.randrange(len(live))))
            else:
                btype = "L1" if rng.random() < 0.2 else "DRAM"
                size = TILE_BYTES * rng.choice((1, 1, 2, 4))
                live.append(b.alloc(BASE + TILE_BYTES * rng.randrange(12), size=size, buffer_type=btype))

    x = b.alloc(BASE)
    traces = []
    for step in range(6):
        churn(12)
        tid = b.begin_trace(line=10)
        h = b.alloc(BASE + TILE_BYTES * (1 + step % 3))
        y = b.alloc(BASE + TILE_BYTES * (4 + step % 2), size=2 * TILE_BYTES)
        b.op("ttnn.matmul", [x, h], [h], line=11)
        b.op("ttnn.relu", [h], [y], line=12)
        b.free(h)
        b.end_trace(tid, line=13)
        traces.append(tid)
        churn(10)
        b.execute(tid, line=14)
        if len(traces) > 1:
            b.execute(traces[-2], line=15)
        churn(10)
        if step % 2:
            for old in traces[-2:]:
                b.release(old, line=16)
    b.device = 1
    b.open_device(line=20)
    churn(15)
    b.write(path)
    return path


def _rng(r):
    return (r.trace.id, r.role, r.buffer_id, r.address, r.end, r.buffer_type)


def _normal(maps):
    return [
        ((m.device, m.buffer_type, m.last_seq, m.hazard_count),
         [(g.address, g.end, [_rng(r) for r in g.ranges]) for g in m.groups],
         [(bar.buffer, bar.start, bar.stop, [_rng(r) for r in bar.hazards]) for bar in m.bars])
        for m in maps
    ]  # fmt: skip


@pytest.fixture(scope="module")
def session(tmp_path_factory):
    with Session.open(_session(tmp_path_factory.mktemp("map") / "map.db")) as s:
        yield s


def _by_buffer_rows(session):
    traces = session.traces()
    executes = trace_executions(traces, trace_execute_rows(session))
    return build_maps(session.buffers(), traces, buffers_by_trace(traces, session.capture_buffers()),
                      session.seq_range()[1], executes)  # fmt: skip


def test_map_from_plain_rows_equals_map_from_buffer_rows(session):
    """GIVEN a session with overlapping traces, two buffer types and two devices WHEN the map is
    loaded from plain rows THEN it has the same bars, groups and hazards as from BufferRows."""
    loaded = load_maps(session)
    assert [(m.device, m.buffer_type) for m in loaded] == [(0, "DRAM"), (0, "L1"), (1, "DRAM"), (1, "L1")]
    assert _normal(loaded) == _normal(_by_buffer_rows(session))


def test_hazards_are_every_allocation_over_a_live_executed_trace_range(session):
    """GIVEN the same session WHEN the map is loaded THEN a bar's hazards are, in trace end
    order, the ranges of traces whose capture ended before it was allocated, released after,
    executed while it was allocated, on its device, type and addresses (checked pairwise),
    unless it is exactly a trace input's footprint on that input's range (that is the input) or
    was allocated inside another capture (that is TR010's, trace against trace), as TR004."""
    traces = session.traces()
    executes = trace_executions(traces, trace_execute_rows(session))
    by_id = {row.id: row for row in session.buffers()}
    ranges = [
        (t, "reads" if role == "in" else "writes", by_id[bid])
        for t in sorted((t for t in traces if t.end_seq is not None), key=lambda t: t.end_seq)
        for role, bid in buffers_by_trace(traces, session.capture_buffers()).get(t.id, [])
    ]
    made = {(t.id, owner.id) for t, role, owner in ranges if role == "writes"}
    inputs = {(t.id, owner.buffer.address, owner.buffer.end) for t, role, owner in ranges
              if role == "reads" and (t.id, owner.id) not in made}  # fmt: skip
    maps = load_maps(session)
    checked = 0
    for m in maps:
        for bar in m.bars:
            row = bar.buffer
            expected = [
                (t.id, role, owner.id) for t, role, owner in ranges
                if owner.id != row.id and owner.buffer.buffer_type == row.buffer.buffer_type
                and t.device == row.buffer.device and t.end_seq < row.alloc_seq
                and (t.release_seq is None or row.alloc_seq < t.release_seq)
                and owner.buffer.address < row.buffer.end and row.buffer.address < owner.buffer.end
                and any(row.alloc_seq < s and (row.free_seq is None or s < row.free_seq)
                        for s in executes.get(t.id, []))
                and (t.id, row.buffer.address, row.buffer.end) not in inputs
                and row.alloc_phase != "capture"
            ]  # fmt: skip
            assert [(r.trace.id, r.role, r.buffer_id) for r in bar.hazards] == expected
            checked += bool(expected)
    assert checked >= 3 and any(len(bar.hazards) > 1 for m in maps for bar in m.bars)


def test_bars_run_by_address_then_time_and_find_their_hazards_and_buffers(session):
    """GIVEN the loaded maps WHEN bars are looked up by position, buffer id, allocation seq or
    hazard THEN each lookup agrees with walking every bar."""
    for m in load_maps(session):
        bars = list(m.bars)
        assert [(b.address, b.start, b.buffer.id) for b in bars] == sorted(
            (b.address, b.start, b.buffer.id) for b in bars
        )
        assert m.bars.hazard_indices == [i for i, b in enumerate(bars) if b.hazards]
        assert all(m.bars.index_of(b.buffer.id) == i for i, b in enumerate(bars))
        seqs = {b.start for b in bars[::3]}
        assert m.bars.allocated_at(seqs) == [i for i, b in enumerate(bars) if b.start in seqs]
        assert list(m.lines) == [*m.groups, *bars]


def test_the_map_highlights_exactly_the_allocations_tr004_reports(session):
    """GIVEN the same session WHEN the map is loaded and TR004's detector runs on it THEN the
    highlighted bars are the allocations the detector reports: one overlap rule, not two."""
    from ttrecord.analysis import load_context
    from ttrecord.analysis.trace_memory import detect_allocations

    from ttrecord.events import Kind

    ctx = load_context(session)
    allocs = {e.seq: e.buffer for e in ctx.events if e.kind is Kind.ALLOC}
    rows = session.buffers()

    def buffer_at(seq):  # the stored buffer an allocation event made (or confirmed)
        b = allocs[seq]
        return next(r.id for r in rows if r.buffer.address == b.address and r.buffer.device == b.device
                    and r.buffer.buffer_type == b.buffer_type and r.alloc_seq <= seq
                    and (r.free_seq is None or seq < r.free_seq))  # fmt: skip

    # A finding's events: the call that made the buffer (the allocation itself when no call
    # did), the allocation, the replay, the trace's access. Layout luck (a buffer clear of the
    # trace's memory) is on no trace range: the map marks overlaps only.
    reported = {buffer_at(next(s for s in f.events if s in allocs))
                for f in detect_allocations(ctx.events, ctx) if "layout_luck" not in f.evidence}  # fmt: skip
    marked = {m.bars[i].buffer.id for m in load_maps(session) for i in m.bars.hazard_indices}
    assert len(reported) >= 3 and marked == reported
