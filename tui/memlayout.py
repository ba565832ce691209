"""The memory map's data: buffers as lifetimes on an address axis, and what traces own.

A trace replays with the addresses it captured, so every buffer its captured calls read or
wrote is an address range the trace owns until it is released. A buffer allocated after the
capture ended that lands on such a range and is still allocated when the trace executes is
what TR004 is about; the map highlights exactly those.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass

from ttrecord.store.reader import BufferRow, EventFilter, Session, TimelineRow, TraceRow

EXECUTES = EventFilter(kinds=frozenset({"trace_execute"}))


@dataclass(frozen=True)
class TraceRange:
    """An address range a trace reads or writes on replay, owned from capture to release."""

    trace: TraceRow
    role: str  # "reads" | "writes"
    buffer_id: int
    address: int
    end: int
    buffer_type: str = "DRAM"

    @property
    def live_until(self) -> int | None:
        return self.trace.release_seq


@dataclass(frozen=True)
class MapBar:
    buffer: BufferRow
    start: int  # alloc seq
    stop: int  # free seq, or the session's last seq while still live
    hazards: tuple[TraceRange, ...]  # trace ranges it was allocated over while the trace lived

    @property
    def address(self) -> int:
        return self.buffer.buffer.address

    @property
    def end(self) -> int:
        return self.buffer.buffer.end


@dataclass(frozen=True)
class RangeGroup:
    """Every trace range on one address span: a decode loop captures the same addresses in
    each trace, so one line per span (not per trace) keeps the map readable."""

    address: int
    end: int
    ranges: tuple[TraceRange, ...]

    @property
    def roles(self) -> str:
        return "/".join(sorted({r.role for r in self.ranges}))

    @property
    def traces(self) -> list[int]:
        return sorted({r.trace.trace_id for r in self.ranges})


@dataclass(frozen=True)
class MemoryMap:
    device: int
    buffer_type: str
    bars: tuple[MapBar, ...]  # by address, then by time
    groups: tuple[RangeGroup, ...]  # by address
    last_seq: int

    @property
    def title(self) -> str:
        return f"device {self.device} · {self.buffer_type}"

    @property
    def hazard_count(self) -> int:
        return sum(1 for bar in self.bars if bar.hazards)

    def groups_over(self, address: int, end: int) -> list[RangeGroup]:
        """Groups whose span meets [address, end)."""
        return [g for g in self.groups if g.address < end and address < g.end]


def overlaps_trace(row: BufferRow, rng: TraceRange) -> bool:
    """Allocated after the capture ended, before release, on an address the trace owns."""
    if row.id == rng.buffer_id or row.buffer.buffer_type != rng.buffer_type:
        return False
    if row.buffer.device != rng.trace.device:
        return False
    end_seq = rng.trace.end_seq
    if end_seq is None or row.alloc_seq <= end_seq:
        return False
    if rng.live_until is not None and row.alloc_seq >= rng.live_until:
        return False
    return row.buffer.address < rng.end and rng.address < row.buffer.end


def _executed_while_live(executes: list[int], start: int, stop: int | None) -> bool:
    """Did the trace run (a seq in `executes`, sorted) while [start, stop) was allocated?"""
    i = bisect.bisect_right(executes, start)
    return i < len(executes) and (stop is None or executes[i] < stop)


def _hazards(buffers: list[BufferRow], traces: list[TraceRow],
             ranges: dict[int, list[TraceRange]],
             executes: dict[int, list[int]]) -> dict[int, tuple[TraceRange, ...]]:  # fmt: skip
    """Buffer id -> the trace ranges it sat on while the trace executed.

    One sweep in allocation order, keeping the traces captured and not yet released, so each
    buffer is checked against the few live traces rather than every range of the session.
    """
    ended = sorted((t for t in traces if t.end_seq is not None), key=lambda t: t.end_seq)
    live: list[TraceRow] = []
    hazards: dict[int, tuple[TraceRange, ...]] = {}
    i = 0
    for row in sorted(buffers, key=lambda r: r.alloc_seq):
        while i < len(ended) and ended[i].end_seq < row.alloc_seq:
            live.append(ended[i])
            i += 1
        if live and live[0].release_seq is not None and live[0].release_seq <= row.alloc_seq:
            live = [t for t in live if t.release_seq is None or t.release_seq > row.alloc_seq]
        if not live:
            continue
        address, end = row.buffer.address, row.buffer.end
        hits = tuple(
            r for t in live for r in ranges.get(t.id, ())
            if r.address < end and address < r.end and overlaps_trace(row, r)
            and _executed_while_live(executes.get(t.id, []), row.alloc_seq, row.free_seq)
        )  # fmt: skip
        if hits:
            hazards[row.id] = hits
    return hazards


def build_maps(
    buffers: list[BufferRow],
    traces: list[TraceRow],
    trace_buffers: dict[int, list[tuple[str, int]]],
    last_seq: int,
    executes: dict[int, list[int]] | None = None,
) -> list[MemoryMap]:
    """One map per (device, buffer type), in device then type order.

    `trace_buffers` and `executes` are keyed by traces.id: what each trace's captured calls
    read and wrote, and the seqs of its execute_trace calls.
    """
    by_id = {row.id: row for row in buffers}
    ranges: dict[int, list[TraceRange]] = {}
    for trace in traces:
        for role, buffer_id in trace_buffers.get(trace.id, []):
            row = by_id.get(buffer_id)
            if row is not None:
                rng = TraceRange(trace, "reads" if role == "in" else "writes", buffer_id,
                                 row.buffer.address, row.buffer.end, row.buffer.buffer_type)  # fmt: skip
                ranges.setdefault(trace.id, []).append(rng)
    hazards = _hazards(buffers, traces, ranges, executes or {})
    bars_by_key: dict[tuple[int, str], list[MapBar]] = {}
    for row in buffers:
        stop = row.free_seq if row.free_seq is not None else last_seq
        bar = MapBar(row, row.alloc_seq, max(stop, row.alloc_seq), hazards.get(row.id, ()))
        bars_by_key.setdefault(_key(row), []).append(bar)
    spans: dict[tuple[int, str], dict[tuple[int, int], list[TraceRange]]] = {}
    for trace_ranges in ranges.values():
        for rng in trace_ranges:
            key = _key(by_id[rng.buffer_id])
            spans.setdefault(key, {}).setdefault((rng.address, rng.end), []).append(rng)
    maps = []
    for key in sorted(bars_by_key):
        bars = sorted(bars_by_key[key], key=lambda b: (b.address, b.start))
        groups = tuple(
            RangeGroup(a, e, tuple(sorted(rs, key=lambda r: (r.trace.begin_seq, r.role))))
            for (a, e), rs in sorted(spans.get(key, {}).items())
        )
        maps.append(MemoryMap(key[0], key[1], tuple(bars), groups, last_seq))
    return maps


def _key(row: BufferRow) -> tuple[int, str]:
    return row.buffer.device, row.buffer.buffer_type


def load_maps(session: Session) -> list[MemoryMap]:
    """Query the buffers, traces and what each trace touched, then lay them out."""
    traces = session.traces()
    trace_buffers = buffers_by_trace(traces, session.capture_buffers())
    seqs = session.seq_range()
    last_seq = seqs[1] if seqs else 0
    executes = trace_executions(traces, session.timeline(EXECUTES, limit=1 << 40))
    return build_maps(session.buffers(), traces, trace_buffers, last_seq, executes)


def buffers_by_trace(traces: list[TraceRow],
                     rows: list[tuple[int, int, int, str, int]]) -> dict[int, list[tuple[str, int]]]:  # fmt: skip
    """traces.id -> distinct (role, buffer id) its captured calls touched."""
    spans: dict[tuple[int, int], list[TraceRow]] = {}
    for t in traces:
        spans.setdefault((t.device, t.trace_id), []).append(t)
    out: dict[int, dict[tuple[str, int], None]] = {}
    for device, trace_id, seq, role, buffer_id in rows:
        for t in spans.get((device, trace_id), ()):
            if t.begin_seq <= seq and (t.end_seq is None or seq <= t.end_seq):
                out.setdefault(t.id, {})[(role, buffer_id)] = None
                break
    return {tid: sorted(pairs, key=lambda p: (p[1], p[0])) for tid, pairs in out.items()}


def trace_executions(traces: list[TraceRow], rows: list[TimelineRow]) -> dict[int, list[int]]:
    """traces.id -> seqs of its execute_trace calls (trace ids are reused after release)."""
    by_key: dict[tuple[int | None, int | None], list[TraceRow]] = {}
    for t in traces:
        by_key.setdefault((t.device, t.trace_id), []).append(t)
    out: dict[int, list[int]] = {}
    for row in rows:
        for t in by_key.get((row.device, row.trace), ()):
            if t.begin_seq < row.seq and (t.release_seq is None or row.seq < t.release_seq):
                out.setdefault(t.id, []).append(row.seq)
                break
    return out
