"""Turns log records into `ttrecord.events.Event`s, in sequence order, for the store.

A call is complete when both its BEGIN and END records have arrived; point events (buffers,
warnings, regions) are complete at once. Events are released in seq order up to the oldest call
still running, so the writer sees allocations before the calls that use them and a viewer can
open the session while it is being written. At the end, calls that never ended are released
with the status the supervisor decides (DIED for a crash, HUNG for a timeout).
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field
from typing import Any

from ttrecord.events import BufferRef, CallSite, Event, Kind, Phase, Status, TensorRef
from ttrecord.recorder.log import RecordType


_tensors: dict[tuple, TensorRef] = {}  # description -> its (frozen) TensorRef
_KINDS = {k.value: k for k in Kind}  # Kind(value) runs Enum's Python-level lookup
_PHASES = {p.value: p for p in Phase}
_STATUSES = {s.value: s for s in Status}


def _tensor(desc: tuple) -> TensorRef:
    """The TensorRef of a description; most are seen many times (a model's weights are read
    by every step), so each distinct one is built once."""
    hit = _tensors.get(desc)
    if hit is not None:
        return hit
    tid, storage, shape, dtype, layout, memory_config, buf = desc
    buffer = None
    if buf is not None:
        device, btype, address, size, page_size, num_pages = buf
        buffer = BufferRef(device, btype, address, size, page_size, num_pages, tensor_id=tid)
    ref = TensorRef(tid, storage, tuple(shape), dtype, layout, memory_config, buffer)
    if len(_tensors) > 200_000:
        _tensors.clear()
    _tensors[desc] = ref
    return ref


@dataclass
class ProgramEnd:
    """What the child said about how the program ended."""

    header: tuple | None = None
    exception: tuple | None = None  # (type, message, traceback)
    exit_code: int | None = None
    stopped: str | None = None  # why the child stopped recording (its log could not grow)


@dataclass
class Decoder:
    sites: dict[int, CallSite] = field(default_factory=dict)
    open_calls: dict[int, tuple] = field(default_factory=dict)  # seq -> BEGIN record
    end: ProgramEnd = field(default_factory=ProgramEnd)
    _ready: list[tuple[int, Event]] = field(default_factory=list)  # heap by seq
    released = 0

    def feed(self, records: Any) -> None:
        for rec in records:
            tag = rec[0]
            if tag == RecordType.BEGIN:
                self.open_calls[rec[1]] = rec
            elif tag == RecordType.END:
                begin = self.open_calls.pop(rec[1], None)
                if begin is not None:
                    self._push(self._call(begin, rec))
            elif tag == RecordType.POINT:
                self._push(self._point(rec))
            elif tag == RecordType.SITE:
                _, sid, file, line, function, stack = rec
                self.sites[sid] = CallSite(file, line, function, tuple(tuple(s) for s in stack))
            elif tag == RecordType.HEADER:
                self.end.header = rec
            elif tag == RecordType.EXCEPTION:
                self.end.exception = rec[1:]
            elif tag == RecordType.EXIT:
                self.end.exit_code = rec[1]
            elif tag == RecordType.STOPPED:
                self.end.stopped = rec[1]

    def _push(self, ev: Event) -> None:
        heapq.heappush(self._ready, (ev.seq, ev))

    def ready(self) -> list[Event]:
        """Complete events with a seq below every still-running call, in seq order."""
        limit = min(self.open_calls) if self.open_calls else None
        out = []
        heap = self._ready
        while heap and (limit is None or heap[0][0] < limit):
            out.append(heapq.heappop(heap)[1])
        self.released += len(out)
        return out

    def close_open_calls(self, status: Status, error: str | None = None) -> int | None:
        """Release every unfinished call with `status`; returns the seq of the user's call."""
        last_user = last_any = None
        for seq, begin in sorted(self.open_calls.items()):
            ev = self._call(begin, None)
            ev.status = status
            ev.error = error
            self._push(ev)
            last_any = seq
            if ev.parent is None:
                last_user = seq
        self.open_calls.clear()
        return last_user if last_user is not None else last_any

    def _call(self, b: tuple, e: tuple | None) -> Event:
        (_, seq, parent, t, thread, kind, name, phase, device, cq, trace, site, args, inputs,
         region) = b  # fmt: skip
        ev = Event(
            seq=seq, kind=_KINDS.get(kind) or Kind(kind), name=name,
            phase=_PHASES.get(phase) or Phase(phase), t_ns=t, thread=thread,
            device=device, cq=cq, trace=trace, parent=parent,
            callsite=self.sites.get(site) if site is not None else None,
            args=dict(args) if args else None, inputs=tuple(_tensor(d) for d in inputs),
            region=region,
        )  # fmt: skip
        if e is not None:
            _, _, t_end, status, error, outputs, e_device, e_trace, extra = e
            ev.dur_ns = t_end - t
            ev.status = _STATUSES.get(status) or Status(status)
            ev.error = error
            ev.outputs = tuple(_tensor(d) for d in outputs)
            if e_device is not None:
                ev.device = e_device
            if e_trace is not None:
                ev.trace = e_trace
            if extra:
                ev.args = {**(ev.args or {}), **extra}
        return ev

    def _point(self, p: tuple) -> Event:
        _, seq, parent, t, thread, kind, name, phase, device, trace, site, args, region, buf = p
        buffer = BufferRef(buf[0], buf[1], buf[2], buf[3]) if buf is not None else None
        return Event(
            seq=seq, kind=_KINDS.get(kind) or Kind(kind), name=name,
            phase=_PHASES.get(phase) or Phase(phase), t_ns=t, thread=thread,
            device=device, trace=trace, parent=parent,
            callsite=self.sites.get(site) if site is not None else None,
            args=dict(args) if args else None, buffer=buffer, region=region,
        )  # fmt: skip
