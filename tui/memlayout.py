"""The memory map's data: buffers as lifetimes on an address axis, and what traces own.

A trace replays with the addresses it captured, so every buffer its captured calls read or
wrote is an address range the trace owns until it is released. A buffer allocated after the
capture ended that lands on such a range and is still allocated when the trace executes is
what TR004 is about; the map highlights what the rules declare (`Rule.highlight`), TR004's by
the same code its detector uses.

A decode loop allocates 100,000s of buffers and the view shows a screenful, so buffers stay
plain row tuples (`MapRow`) and become `MapBar`s only when looked at (`Bars`).
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from typing import overload
from operator import itemgetter

from ttrecord.events import BufferRef
from ttrecord.meshes import device_label, meshes_of
from ttrecord.placement import Cores, placements_meet
from ttrecord.store.placement_rows import buffer_cores
from ttrecord.store.reader import (
    BufferRow,
    MapRow,
    Session,
    TraceRow,
    map_buffer_rows,
    map_rows_by_id,
    trace_execute_rows,
)


@dataclass(frozen=True, slots=True)
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


@dataclass(frozen=True, slots=True)
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


_ADDRESS_TIME = itemgetter(1, 3)  # address, alloc_seq


class Bars(Sequence[MapBar]):
    """One map's bars by address, then time, then id; each built when asked for."""

    def __init__(self, rows: list[MapRow], key: tuple[int, str], last_seq: int,
                 hazards: dict[int, tuple[MapRow, tuple[TraceRange, ...]]]) -> None:  # fmt: skip
        """`rows` by address then allocation order; `hazards` by buffer id."""
        self._rows, self._key, self._last_seq = rows, key, last_seq
        self._hazards = {buffer_id: ranges for buffer_id, (_, ranges) in hazards.items()}
        # Positions of the bars with hazards, ascending: a bisect each rather than a scan.
        self.hazard_indices: list[int] = sorted(self._position(row) for row, _ in hazards.values())

    def _position(self, row: MapRow) -> int:
        i = bisect.bisect_left(self._rows, _ADDRESS_TIME(row), key=_ADDRESS_TIME)
        while self._rows[i].id != row.id:  # buffers of one address and seq: rare, and few
            i += 1
        return i

    def __len__(self) -> int:
        return len(self._rows)

    @overload
    def __getitem__(self, index: int) -> MapBar: ...
    @overload
    def __getitem__(self, index: slice) -> list[MapBar]: ...
    def __getitem__(self, index: int | slice) -> MapBar | list[MapBar]:
        if isinstance(index, slice):
            return [self._bar(r) for r in self._rows[index]]
        return self._bar(self._rows[index])

    def __iter__(self) -> Iterator[MapBar]:
        return map(self._bar, self._rows)

    def _bar(self, r: MapRow) -> MapBar:
        ref = BufferRef(self._key[0], self._key[1], r.address, r.size, r.page_size, r.num_pages,
                        r.tensor_id)  # fmt: skip
        stop = r.free_seq if r.free_seq is not None else self._last_seq
        return MapBar(BufferRow(r.id, ref, r.alloc_seq, r.free_seq, r.alloc_phase), r.alloc_seq,
                      max(stop, r.alloc_seq), self._hazards.get(r.id, ()))  # fmt: skip

    def index_of(self, buffer_id: int) -> int | None:
        return next((i for i, r in enumerate(self._rows) if r.id == buffer_id), None)

    def allocated_at(self, seqs: set[int] | frozenset[int]) -> list[int]:
        """Positions of the bars allocated at one of these seqs."""
        return [i for i, r in enumerate(self._rows) if r.alloc_seq in seqs] if seqs else []


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


class Lines(Sequence["RangeGroup | MapBar"]):
    """What the view lists: the range groups, then the bars (without copying the bars)."""

    def __init__(self, groups: tuple[RangeGroup, ...], bars: Bars) -> None:
        self.groups, self.bars = groups, bars

    def __len__(self) -> int:
        return len(self.groups) + len(self.bars)

    def __getitem__(self, index: int) -> RangeGroup | MapBar:  # type: ignore[override]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(index)
        n = len(self.groups)
        return self.groups[index] if index < n else self.bars[index - n]

    def bar_line(self, bar_index: int) -> int:
        return len(self.groups) + bar_index


Placements = Callable[[set[int]], Mapping[int, Cores]]  # buffer ids -> cores of the sharded ones


@dataclass(frozen=True)
class MemoryMap:
    device: int
    buffer_type: str
    bars: Bars  # by address, then by time
    groups: tuple[RangeGroup, ...]  # by address
    last_seq: int
    device_label: str | None = None  # the device by its chips (`ttrecord.meshes`), when recorded

    @property
    def title(self) -> str:
        return f"{self.device_label or f'device {self.device}'} · {self.buffer_type}"

    @property
    def hazard_count(self) -> int:
        return len(self.bars.hazard_indices)

    @cached_property
    def lines(self) -> Lines:
        return Lines(self.groups, self.bars)


def hazard_spans(m: MemoryMap) -> list[tuple[int, int, int, int]]:
    """(address, end, allocated at, freed at or last seq) of each buffer the map flags as
    allocated over trace memory: the one place the scaled map asks where hazards are."""
    return [(b.address, b.end, b.start, b.stop) for b in (m.bars[i] for i in m.bars.hazard_indices)]


def owned_spans(m: MemoryMap) -> list[tuple[int, int, int, int]]:
    """(address, end, capture begin, release or last seq) of every range a trace owns."""
    return sorted({(g.address, g.end, r.trace.begin_seq, r.live_until or m.last_seq)
                   for g in m.groups for r in g.ranges})  # fmt: skip


def _highlights(rows: list[MapRow], key: tuple[int, str], ended: list[TraceRow],
                ranges: dict[int, list[TraceRange]], executes: dict[int, list[int]],
                placements: Placements | None = None) -> dict[int, tuple[MapRow, tuple[TraceRange, ...]]]:  # fmt: skip
    """Buffer id -> its row and the trace ranges it is marked for: what the rules that declare
    a memory-map highlight (TR004: `ttrecord.analysis.trace_overlap.highlight`) mark, where
    the buffers' cores meet (`placements(ids)`: buffer id -> cores of the sharded ones among
    `ids`; the rules see addresses only, as the map's rows hold)."""
    from ttrecord.analysis.registry import rules

    found: dict[int, tuple[MapRow, tuple[TraceRange, ...]]] = {}
    for rule in rules().values():
        if rule.highlight is not None:
            marked = rule.highlight(key, rows, ended, ranges, executes)
            for buffer_id, (row, hits) in marked.items():
                seen = found[buffer_id][1] if buffer_id in found else ()
                found[buffer_id] = (row, seen + tuple(h for h in hits if h not in seen))
    if found and placements is not None:
        cores = placements(set(found) | {h.buffer_id for _, hits in found.values() for h in hits})
        if cores:
            placed = {b: (row, tuple(h for h in hits if placements_meet(cores.get(b), cores.get(h.buffer_id))))
                      for b, (row, hits) in found.items()}  # fmt: skip
            found = {b: v for b, v in placed.items() if v[1]}
    return found


def layout(rows_by_key: dict[tuple[int, str], list[MapRow]], traces: list[TraceRow],
           trace_buffers: dict[int, list[tuple[str, int]]], last_seq: int,
           executes: dict[int, list[int]],
           owned: dict[int, tuple[tuple[int, str], MapRow]] | None = None,
           placements: Placements | None = None) -> list[MemoryMap]:  # fmt: skip
    """One map per (device, buffer type), in device then type order, from each type's
    buffers in allocation order (see `build_maps` for the other arguments; `placements` as
    `_highlights` takes it).

    `owned` is the buffers of `trace_buffers` by id, with their (device, type), when the
    caller has them (load_maps asks SQLite by id: cheaper than scanning every row here)."""
    if owned is None:
        wanted = {buffer_id for pairs in trace_buffers.values() for _, buffer_id in pairs}
        owned = {}
        for key, rows in rows_by_key.items():
            owned.update((r.id, (key, r)) for r in rows if r.id in wanted)
    ranges: dict[int, list[TraceRange]] = {}
    spans: dict[tuple[int, str], dict[tuple[int, int], list[TraceRange]]] = {}
    for trace in traces:
        for role, buffer_id in trace_buffers.get(trace.id, []):
            if buffer_id in owned:
                key, r = owned[buffer_id]
                rng = TraceRange(trace, "reads" if role == "in" else "writes", buffer_id,
                                 r.address, r.address + r.size, key[1])  # fmt: skip
                ranges.setdefault(trace.id, []).append(rng)
                spans.setdefault(key, {}).setdefault((rng.address, rng.end), []).append(rng)
    ended = sorted((t for t in traces if t.end_seq is not None), key=lambda t: t.end_seq or 0)
    maps = []
    for key in sorted(k for k, rows in rows_by_key.items() if rows):
        rows = rows_by_key[key]
        hazards = _highlights(rows, key, ended, ranges, executes, placements)
        # Stable: by address, then allocation order (alloc_seq, then id).
        bars = Bars(sorted(rows, key=itemgetter(1)), key, last_seq, hazards)
        groups = tuple(
            RangeGroup(a, e, tuple(sorted(rs, key=lambda r: (r.trace.begin_seq, r.role))))
            for (a, e), rs in sorted(spans.get(key, {}).items())
        )
        maps.append(MemoryMap(key[0], key[1], bars, groups, last_seq))
    return maps


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
    rows_by_key: dict[tuple[int, str], list[MapRow]] = {}
    for row in sorted(buffers, key=lambda r: r.alloc_seq):
        b = row.buffer
        rows_by_key.setdefault((b.device, b.buffer_type), []).append(
            MapRow(row.id, b.address, b.size, row.alloc_seq, row.free_seq, row.alloc_phase,
                   b.page_size, b.num_pages, b.tensor_id)  # fmt: skip
        )
    return layout(rows_by_key, traces, trace_buffers, last_seq, executes or {})


def load_maps(session: Session) -> list[MemoryMap]:
    """Query the buffers, traces and what each trace touched, then lay them out."""
    traces = session.traces()
    trace_buffers = buffers_by_trace(traces, session.capture_buffers())
    seqs = session.seq_range()
    last_seq = seqs[1] if seqs else 0
    executes = trace_executions(traces, trace_execute_rows(session))
    owned = map_rows_by_id(session, {b for pairs in trace_buffers.values() for _, b in pairs})
    maps = layout(map_buffer_rows(session), traces, trace_buffers, last_seq, executes, owned,
                  lambda ids: buffer_cores(session, ids))  # fmt: skip
    meshes = meshes_of(session.devices())
    return [replace(m, device_label=device_label(m.device, meshes)) if m.device in meshes else m
            for m in maps]  # fmt: skip


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


def trace_executions(traces: list[TraceRow],
                     rows: list[tuple[int, int | None, int | None]]) -> dict[int, list[int]]:  # fmt: skip
    """traces.id -> seqs of its execute_trace calls, from (seq, device, trace id) rows in seq
    order (trace ids are reused after release)."""
    by_key: dict[tuple[int | None, int | None], list[TraceRow]] = {}
    for t in traces:
        by_key.setdefault((t.device, t.trace_id), []).append(t)
    out: dict[int, list[int]] = {}
    for seq, device, trace in rows:
        for t in by_key.get((device, trace), ()):
            if t.begin_seq < seq and (t.release_seq is None or seq < t.release_seq):
                out.setdefault(t.id, []).append(seq)
                break
    return out
