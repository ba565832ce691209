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

from ttrecord.placement import cores_of
from ttrecord.events import BufferRef, CallSite, Event, Status, TensorRef
from ttrecord.store import vocabulary
from ttrecord.store.storable import storable
from ttrecord.recorder.records import (
    RECORDS, Begin, BufferDesc, BufferSpan, End, Point, RecordType, Site, TensorDesc,
)


_tensors: dict[tuple, TensorRef] = {}  # description -> its (frozen) TensorRef
# The mapping's dicts, looked up inline: a function call per row costs as much as the row.
_KINDS, _PHASES, _STATUSES, _kind = (
    vocabulary.KINDS, vocabulary.PHASES, vocabulary.STATUSES, vocabulary.kind
)
_RECORDS = RECORDS
_BEGIN, _END, _POINT = RecordType.BEGIN, RecordType.END, RecordType.POINT


def _tensor(desc: tuple) -> TensorRef:
    """The TensorRef of a description; most are seen many times (a model's weights are read
    by every step), so each distinct one is built once."""
    hit = _tensors.get(desc)
    if hit is not None:
        return hit
    d = TensorDesc._make(desc)
    buffer = None
    if d.buffer is not None:
        b = BufferDesc._make(d.buffer)
        buffer = BufferRef(b.device, b.buffer_type, b.address, b.size, b.page_size, b.num_pages,
                           tensor_id=d.tensor_id)  # fmt: skip
        if d.memory_config is not None and " on (" in d.memory_config:  # sharded: its cores
            buffer = buffer.placed(cores_of(d.memory_config))
    ref = TensorRef(d.tensor_id, d.storage, tuple(d.shape), d.dtype, d.layout, d.memory_config,
                    buffer)  # fmt: skip
    if len(_tensors) > 200_000:
        _tensors.clear()
    _tensors[desc] = ref
    return ref


@dataclass
class ProgramEnd:
    """What the child said about how the program ended."""

    header: Any = None  # records.Header
    exception: Any = None  # records.ProgramException
    exit_code: int | None = None
    stopped: str | None = None  # why the child stopped recording (its log could not grow)


@dataclass
class Decoder:
    sites: dict[int, CallSite] = field(default_factory=dict)
    open_calls: dict[int, Begin] = field(default_factory=dict)  # seq -> its Begin record
    end: ProgramEnd = field(default_factory=ProgramEnd)
    _ready: list[tuple[int, Event]] = field(default_factory=list)  # heap by seq
    released = 0

    def feed(self, records: Any) -> None:
        for raw in records:
            rec = _RECORDS[raw[0]]._make(raw)  # records.decode, inlined (per record)
            tag = raw[0]
            if tag == _BEGIN:
                self.open_calls[rec.seq] = rec
            elif tag == _END:
                begin = self.open_calls.pop(rec.seq, None)
                if begin is not None:
                    self._push(self._call(begin, rec))
            elif tag == _POINT:
                self._push(self._point(rec))
            elif tag == RecordType.SITE:
                site: Site = rec
                # once per site: file names may hold bytes that are not UTF-8
                self.sites[site.site_id] = CallSite(
                    storable(site.file), site.line, storable(site.function),
                    tuple(tuple(storable(x) for x in s) for s in site.stack))  # fmt: skip
            elif tag == RecordType.HEADER:
                self.end.header = rec._replace(**{k: storable(v) for k, v in rec._asdict().items()})
            elif tag == RecordType.EXCEPTION:
                self.end.exception = rec._replace(
                    **{k: storable(v) for k, v in rec._asdict().items()})
            elif tag == RecordType.EXIT:
                self.end.exit_code = rec.exit_code
            elif tag == RecordType.STOPPED:
                self.end.stopped = storable(rec.reason)

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

    def _call(self, b: Begin, e: End | None) -> Event:
        ev = Event(
            seq=b.seq, kind=(_KINDS.get(b.kind) or _kind(b.kind)), name=b.name,
            phase=_PHASES[b.phase], t_ns=b.t_ns, thread=b.thread,
            device=b.device, cq=b.cq, trace=b.trace, parent=b.parent,
            callsite=self.sites.get(b.site_id) if b.site_id is not None else None,
            args=dict(b.args) if b.args else None, inputs=tuple(_tensor(d) for d in b.inputs),
            region=b.region,
        )  # fmt: skip
        if e is not None:
            ev.dur_ns = e.t_ns - b.t_ns
            ev.status = _STATUSES[e.status]
            ev.error = e.error if e.error is None else storable(e.error)
            ev.outputs = tuple(_tensor(d) for d in e.outputs)
            if e.device is not None:
                ev.device = e.device
            if e.trace is not None:
                ev.trace = e.trace
            if e.extra:
                ev.args = {**(ev.args or {}), **e.extra}
        return ev

    def _point(self, p: Point) -> Event:
        buf = p.buffer
        buffer = None
        if buf is not None:
            b = BufferSpan._make(buf[:4])
            buffer = BufferRef(b.device, b.buffer_type, b.address, b.size)
        return Event(
            seq=p.seq, kind=(_KINDS.get(p.kind) or _kind(p.kind)), name=storable(p.name),
            phase=_PHASES[p.phase], t_ns=p.t_ns, thread=p.thread,
            device=p.device, trace=p.trace, parent=p.parent,
            callsite=self.sites.get(p.site_id) if p.site_id is not None else None,
            args=dict(p.args) if p.args else None, buffer=buffer, region=storable(p.region),
        )  # fmt: skip
