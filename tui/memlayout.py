"""The memory map's data: buffers as lifetimes on an address axis, and what traces own.

A trace replays with the addresses it captured, so every buffer its captured calls read or
wrote is an address range the trace owns until it is released. A buffer allocated after the
capture ended that lands on such a range while the trace is live is what TR004 is about; the
map highlights exactly those.
"""

from __future__ import annotations

from dataclasses import dataclass

from ttrecord.store.reader import BufferRow, Session, TraceRow


@dataclass(frozen=True)
class TraceRange:
    """An address range a trace reads or writes on replay, owned from capture to release."""

    trace: TraceRow
    role: str  # "reads" | "writes"
    buffer_id: int
    address: int
    end: int

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
class MemoryMap:
    device: int
    buffer_type: str
    bars: tuple[MapBar, ...]  # by address, then by time
    ranges: tuple[TraceRange, ...]
    last_seq: int

    @property
    def title(self) -> str:
        return f"device {self.device} · {self.buffer_type}"

    @property
    def hazard_count(self) -> int:
        return sum(1 for bar in self.bars if bar.hazards)


def overlaps_trace(row: BufferRow, rng: TraceRange) -> bool:
    """Allocated after the capture ended, before release, on an address the trace owns."""
    if row.id == rng.buffer_id:
        return False
    end_seq = rng.trace.end_seq
    if end_seq is None or row.alloc_seq <= end_seq:
        return False
    if rng.live_until is not None and row.alloc_seq >= rng.live_until:
        return False
    return row.buffer.address < rng.end and rng.address < row.buffer.end


def build_maps(
    buffers: list[BufferRow],
    traces: list[TraceRow],
    trace_buffers: dict[int, list[tuple[str, int]]],
    last_seq: int,
) -> list[MemoryMap]:
    """One map per (device, buffer type), in device then type order."""
    by_id = {row.id: row for row in buffers}
    ranges: list[TraceRange] = []
    for trace in traces:
        for role, buffer_id in trace_buffers.get(trace.id, []):
            row = by_id.get(buffer_id)
            if row is None:
                continue
            ranges.append(
                TraceRange(
                    trace,
                    "reads" if role == "in" else "writes",
                    buffer_id,
                    row.buffer.address,
                    row.buffer.end,
                )
            )
    keys = sorted({(r.buffer.device, r.buffer.buffer_type) for r in buffers})
    maps = []
    for device, btype in keys:
        mine = [r for r in ranges if _key(by_id[r.buffer_id]) == (device, btype)]
        bars = []
        for row in buffers:
            if _key(row) != (device, btype):
                continue
            hazards = tuple(rng for rng in mine if overlaps_trace(row, rng))
            stop = row.free_seq if row.free_seq is not None else last_seq
            bars.append(MapBar(row, row.alloc_seq, max(stop, row.alloc_seq), hazards))
        bars.sort(key=lambda b: (b.address, b.start))
        mine.sort(key=lambda r: (r.address, r.trace.begin_seq))
        maps.append(MemoryMap(device, btype, tuple(bars), tuple(mine), last_seq))
    return maps


def _key(row: BufferRow) -> tuple[int, str]:
    return row.buffer.device, row.buffer.buffer_type


def load_maps(session: Session) -> list[MemoryMap]:
    """Query the buffers, traces and what each trace touched, then lay them out."""
    traces = session.traces()
    trace_buffers = {t.id: session.trace_buffers(t) for t in traces}
    seqs = session.seq_range()
    last_seq = seqs[1] if seqs else 0
    return build_maps(session.buffers(), traces, trace_buffers, last_seq)
