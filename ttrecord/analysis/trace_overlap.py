"""TR004's overlap rule, decided in one place: a buffer on trace memory at a replay.

A buffer allocated after a trace's capture ended (and before its release), overlapping a
bank-local range the trace reads, writes or creates on that device and buffer type, and still
allocated when the trace replays, is written over (or read as input) by that replay. Three
callers ask it, on three shapes of data, and must agree:
- the detector (`trace_memory.detect_allocations`), on loaded events;
- the loader's prefilter (`loading.allocations_over_traces`), on buffer rows of a session, so
  that the detector sees every allocation it would report and few others;
- the memory map (`highlight`, declared by TR004's catalog module), on the map's rows.
Each builds a `TraceWindow` per trace and asks `suspects` (which buffers, by allocation time,
can be over it at all: a bisect each way) and `replay_over` (is this one, and at which replay).
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from operator import itemgetter
from typing import Any, Protocol

RangeKey = tuple[int, str]  # (device, buffer type)


class Spans:
    """Address ranges merged into disjoint spans, for a bisect overlap test: a trace can touch
    thousands of buffers and a long run allocates millions of times."""

    __slots__ = ("starts", "ends")

    def __init__(self, ranges: Iterable[tuple[int, int]]) -> None:
        self.starts: list[int] = []
        self.ends: list[int] = []
        for address, end in sorted(ranges):
            if self.ends and address <= self.ends[-1]:
                self.ends[-1] = max(self.ends[-1], end)
            else:
                self.starts.append(address)
                self.ends.append(end)

    def hits(self, address: int, end: int) -> bool:
        """[address, end) meets one of the spans."""
        if end <= address:
            return False
        i = bisect.bisect_left(self.starts, end) - 1  # last span starting before it ends
        return i >= 0 and self.ends[i] > address


@dataclass(frozen=True)
class TraceWindow:
    """One captured trace as the rule sees it: when it can be allocated over, what it owns."""

    device: int | None
    end: int  # seq of end_trace_capture
    release: int | None  # seq of release_trace, None while live
    executes: Sequence[int]  # seqs of its execute_trace calls, ascending
    spans: Mapping[RangeKey, Spans]  # what it reads, writes or creates, by (device, type)

    def suspects(self, rows: Sequence[Any], alloc: Callable[[Any], int] = itemgetter(0)) -> slice:
        """The rows (ascending by `alloc(row)`, their allocation seq) allocated after the
        capture and before both the release and the last replay: the only ones that can be
        over this trace. A decode loop replays right after capturing, so most are not."""
        if not self.executes:
            return slice(0, 0)
        last = self.executes[-1] if self.release is None else min(self.executes[-1], self.release)
        lo = bisect.bisect_right(rows, self.end, key=alloc)
        return slice(lo, max(lo, bisect.bisect_left(rows, last, key=alloc)))

    def replay_over(self, device: int, buffer_type: str, address: int, end: int, alloc: int,
                    free: int | None) -> int | None:  # fmt: skip
        """The first replay of this trace while the buffer [address, end), allocated at seq
        `alloc` and freed at `free` (None: never), sat on memory the trace uses; None when it
        never did (allocated before the capture ended or after the release, elsewhere, or
        freed before any replay)."""
        spans = self.spans.get((device, buffer_type))
        if spans is None or not spans.hits(address, end):
            return None
        return self.replay_alive(device, buffer_type, alloc, free)

    def replay_alive(self, device: int, buffer_type: str, alloc: int, free: int | None) -> int | None:
        """The first replay of this trace while a buffer allocated at seq `alloc` (after the
        capture, before the release) and freed at `free` was still allocated, wherever it lies,
        on a device and buffer type the trace uses: where the allocator could have put it on
        the trace's memory (ttnn's trace allocation tracker counts it against the trace)."""
        if device != self.device or alloc <= self.end or (device, buffer_type) not in self.spans:
            return None
        if self.release is not None and alloc >= self.release:
            return None
        i = bisect.bisect_right(self.executes, alloc)
        if i == len(self.executes):
            return None
        replay = self.executes[i]
        if (free is not None and replay >= free) or (self.release is not None and replay >= self.release):
            return None
        return replay

    def nearest(self, device: int, buffer_type: str, address: int, end: int
                ) -> tuple[tuple[int, int] | None, tuple[int, int] | None, tuple[int, int, int]]:  # fmt: skip
        """The trace's spans right below and right above [address, end) (None when there is
        none on that side), and (span count, lowest address, highest end) of all of them."""
        spans = self.spans.get((device, buffer_type))
        if spans is None or not spans.starts:
            return None, None, (0, 0, 0)
        i = bisect.bisect_right(spans.starts, address)  # spans starting at or below it
        below = (spans.starts[i - 1], spans.ends[i - 1]) if i > 0 and spans.ends[i - 1] <= address else None
        j = bisect.bisect_left(spans.starts, end)
        above = (spans.starts[j], spans.ends[j]) if j < len(spans.starts) else None
        return below, above, (len(spans.starts), spans.starts[0], max(spans.ends))


class MapRange(Protocol):
    """A range a trace reads or writes, as the memory map holds it (`tui.memlayout.TraceRange`)."""

    @property
    def buffer_id(self) -> int: ...
    @property
    def address(self) -> int: ...
    @property
    def end(self) -> int: ...
    @property
    def buffer_type(self) -> str: ...
    @property
    def role(self) -> str: ...


class MapTrace(Protocol):
    """A captured trace as the memory map holds it (`store.rows.TraceRow`)."""

    @property
    def id(self) -> int: ...
    @property
    def device(self) -> int: ...
    @property
    def end_seq(self) -> int | None: ...
    @property
    def release_seq(self) -> int | None: ...


_ALLOC = itemgetter(3)


def highlight(key: RangeKey, rows: Sequence[tuple], traces: Sequence[MapTrace],
              ranges: Mapping[int, Sequence[MapRange]],
              executes: Mapping[int, Sequence[int]]) -> dict[int, tuple[tuple, tuple[Any, ...]]]:  # fmt: skip
    """TR004 in the memory map: buffer id -> (its row, the trace ranges it sat on at a replay).

    `rows` are one map's buffers in allocation order (`store.buffer_rows.MapRow`: id, address,
    size, alloc seq, free seq, alloc phase, ...); `traces` the captured ones; `ranges` and
    `executes` by traces.id. Like the detector, an allocation made inside a capture is the
    capture's own, and a buffer of exactly an input's footprint on that input's range is the
    trace's input (whether it was written before the replay is TR005's question); the detector
    also compares shape, dtype and layout, which the map does not load.
    """
    device, buffer_type = key
    found: dict[int, tuple[tuple, list[Any]]] = {}
    for t in traces:
        xs = executes.get(t.id)
        own = [r for r in ranges.get(t.id, ()) if r.buffer_type == buffer_type]
        if t.device != device or t.end_seq is None or not own or not xs:
            continue
        window = TraceWindow(t.device, t.end_seq, t.release_seq, xs,
                             {key: Spans((r.address, r.end) for r in own)})  # fmt: skip
        made = {r.buffer_id for r in own if r.role == "writes"}
        inputs = {(r.address, r.end) for r in own if r.role == "reads" and r.buffer_id not in made}
        for row in rows[window.suspects(rows, _ALLOC)]:
            address, end = row[1], row[1] + row[2]
            if row[5] == "capture" or (address, end) in inputs:
                continue
            if window.replay_over(device, buffer_type, address, end, row[3], row[4]) is None:
                continue
            hits = [r for r in own if r.address < end and address < r.end and r.buffer_id != row[0]]
            if hits:
                found.setdefault(row[0], (row, []))[1].extend(hits)
    return {buffer_id: (row, tuple(hits)) for buffer_id, (row, hits) in found.items()}
