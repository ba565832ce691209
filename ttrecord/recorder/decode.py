"""Turns log records into `ttrecord.events.Event`s, in sequence order, for the store.

A call is complete when both its BEGIN and END records have arrived; point events (buffers,
warnings, regions) are complete at once. Events are released in seq order up to the oldest call
still running, so the writer sees allocations before the calls that use them and a viewer can
open the session while it is being written. At the end, calls that never ended are released
with the status the supervisor decides (DIED for a crash, HUNG for a timeout).
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass, field, fields
from operator import attrgetter
from typing import Any

from ttrecord.placement import cores_of
from ttrecord.events import BufferRef, CallSite, Event, Status, TensorRef
from ttrecord.store import vocabulary
from ttrecord.store.storable import storable
from ttrecord.recorder.records import (
    RECORDS, Begin, BufferDesc, End, Point, RecordType, Site, TensorDesc,
)


_tensors: dict[tuple, TensorRef] = {}  # description -> its (frozen) TensorRef
_tensor_lists: dict[tuple, tuple[TensorRef, ...]] = {}  # a record's inputs/outputs -> TensorRefs
# The mapping's dicts, looked up inline: a function call per row costs as much as the row.
_KINDS, _PHASES, _STATUSES, _kind = (
    vocabulary.KINDS, vocabulary.PHASES, vocabulary.STATUSES, vocabulary.kind
)
_RECORDS = RECORDS
_BEGIN, _END, _POINT = RecordType.BEGIN, RecordType.END, RecordType.POINT
_OK = Status.OK
# Field positions in the plain record tuples: the hot paths index them instead of building a
# NamedTuple per record (as much again as the rest of a record's decoding).
_B_SEQ, _E_SEQ = Begin._fields.index("seq"), End._fields.index("seq")


def _tensor(desc: tuple) -> TensorRef:
    """The TensorRef of a description; most are seen many times (a model's weights are read
    by every step), so each distinct one is built once."""
    hit = _tensors.get(desc)
    if hit is not None:
        return hit
    tensor_id, storage, shape, dtype, layout, memory_config, buf = desc
    buffer = None
    if buf is not None:
        device, buffer_type, address, size, page_size, num_pages = buf
        buffer = BufferRef(device, buffer_type, address, size, page_size, num_pages,
                           tensor_id=tensor_id)  # fmt: skip
        if memory_config is not None and " on (" in memory_config:  # sharded: its cores
            buffer = buffer.placed(cores_of(memory_config))
    ref = TensorRef(tensor_id, storage, tuple(shape), dtype, layout, memory_config, buffer)
    if len(_tensors) > 200_000:
        _tensors.clear()
    _tensors[desc] = ref
    return ref


def _tensor_list(descs: tuple) -> tuple[TensorRef, ...]:
    """The TensorRefs of a call's inputs or outputs; a call's list repeats too (the same
    weights and activations every step), so one lookup serves the whole list."""
    hit = _tensor_lists.get(descs)
    if hit is not None:
        return hit
    refs = tuple([_tensor(d) for d in descs])
    if len(_tensor_lists) > 20_000:  # lists of new activations never recur: stay small
        _tensor_lists.clear()
    _tensor_lists[descs] = refs
    return refs


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
    open_calls: dict[int, tuple] = field(default_factory=dict)  # seq -> its Begin record
    end: ProgramEnd = field(default_factory=ProgramEnd)
    # Complete events not yet released; they arrive almost in seq order (a call completes
    # after its children), so one sort per `ready` costs less than a heap push and pop each.
    _pending: list[Event] = field(default_factory=list)
    released = 0

    def feed(self, records: Any) -> None:
        open_calls, pending, call, point = self.open_calls, self._pending, self._call, self._point
        for raw in records:
            tag = raw[0]
            if tag == _POINT:
                pending.append(point(raw))
            elif tag == _END:
                begin = open_calls.pop(raw[_E_SEQ], None)
                if begin is not None:
                    pending.append(call(begin, raw))
            elif tag == _BEGIN:
                if len(raw) != _B_LEN:
                    Begin._make(raw)  # raises the TypeError records.decode gives
                open_calls[raw[_B_SEQ]] = raw
            else:
                self._other(_RECORDS[tag]._make(raw))

    def _other(self, rec: Any) -> None:
        """A record that is no event: a call site, the header, how the program ended."""
        tag = rec.tag
        if tag == RecordType.SITE:
            site: Site = rec
            # once per site: file names may hold bytes that are not UTF-8
            self.sites[site.site_id] = CallSite(
                storable(site.file), site.line, storable(site.function),
                tuple(tuple(storable(x) for x in s) for s in site.stack))  # fmt: skip
        elif tag == RecordType.HEADER:
            self.end.header = rec._replace(**{k: storable(v) for k, v in rec._asdict().items()})
        elif tag == RecordType.EXCEPTION:
            self.end.exception = rec._replace(**{k: storable(v) for k, v in rec._asdict().items()})
        elif tag == RecordType.EXIT:
            self.end.exit_code = rec.exit_code
        elif tag == RecordType.STOPPED:
            self.end.stopped = storable(rec.reason)

    def ready(self) -> list[Event]:
        """Complete events with a seq below every still-running call, in seq order."""
        pending = self._pending
        if not pending:
            return []
        pending.sort(key=_seq_of)
        if self.open_calls:
            cut = bisect_left(pending, min(self.open_calls), key=_seq_of)
            out = pending[:cut]
            del pending[:cut]
        else:
            out, self._pending = pending, []
        self.released += len(out)
        return out

    def close_open_calls(self, status: Status, error: str | None = None) -> int | None:
        """Release every unfinished call with `status`; returns the seq of the user's call."""
        last_user = last_any = None
        for seq, begin in sorted(self.open_calls.items()):
            ev = self._call(begin, None)
            ev.status = status
            ev.error = error
            self._pending.append(ev)
            last_any = seq
            if ev.parent is None:
                last_user = seq
        self.open_calls.clear()
        return last_user if last_user is not None else last_any

    def _call(self, b: tuple, e: tuple | None) -> Event:
        (_, seq, parent, t_ns, thread, kind, name, phase, device, cq, trace, site_id, args,
         inputs, region) = b  # fmt: skip
        site = self.sites.get(site_id) if site_id is not None else None
        args = dict(args) if args else None
        ins = _tensor_list(inputs) if inputs else ()
        if e is None:
            return Event(seq, _KINDS.get(kind) or _kind(kind), name, _PHASES[phase], t_ns, None,
                         thread, device, cq, trace, parent, site, _OK, None, args, ins, (),
                         None, region)  # fmt: skip
        (_, _, t_end, status, error, outputs, learnt_device, learnt_trace, extra) = e
        if learnt_device is not None:
            device = learnt_device
        if learnt_trace is not None:
            trace = learnt_trace
        if extra:
            args = {**(args or {}), **extra}
        return Event(seq, _KINDS.get(kind) or _kind(kind), name, _PHASES[phase], t_ns,
                     t_end - t_ns, thread, device, cq, trace, parent, site, _STATUSES[status],
                     error if error is None else storable(error), args, ins,
                     _tensor_list(outputs) if outputs else (), None, region)  # fmt: skip

    def _point(self, p: tuple) -> Event:
        (_, seq, parent, t_ns, thread, kind, name, phase, device, trace, site_id, args, region,
         buf) = p  # fmt: skip
        stored = _names.get(name)
        if stored is None:
            stored = _stored_name(name)
        return Event(
            seq, _KINDS.get(kind) or _kind(kind), stored, _PHASES[phase], t_ns, None, thread,
            device, None, trace, parent,
            self.sites.get(site_id) if site_id is not None else None, _OK, None,
            dict(args) if args else None, (), (),
            None if buf is None else (_spans.get(buf) or _span(buf)),
            region if region is None else storable(region),
        )  # fmt: skip


_seq_of = attrgetter("seq")
_spans: dict[tuple, BufferRef] = {}  # a point's buffer -> its BufferRef (addresses are reused)


def _span(buf: tuple) -> BufferRef:
    ref = BufferRef(buf[0], buf[1], buf[2], buf[3])
    if len(_spans) > 50_000:
        _spans.clear()
    _spans[buf] = ref
    return ref


_B_LEN = len(Begin._fields)
_names: dict[Any, Any] = {}  # a point's name -> its storable text (names repeat: alloc, free)


def _stored_name(name: Any) -> Any:
    text = storable(name)
    if len(_names) < 10_000:
        _names[name] = text
    return text


# `_call`, `_point` and `_tensor` unpack records and build Events by position (a NamedTuple or
# keywords per event cost as much as the rest of the decoding), as the C pipeline reads them and
# the recorder's C hot path builds them: the orders they assume, checked once.
_ORDERS = {
    "Begin": (Begin._fields, ("tag", "seq", "parent", "t_ns", "thread", "kind", "name", "phase",
                              "device", "cq", "trace", "site_id", "args", "inputs", "region")),
    "End": (End._fields, ("tag", "seq", "t_ns", "status", "error", "outputs", "device", "trace",
                          "extra")),
    "Point": (Point._fields, ("tag", "seq", "parent", "t_ns", "thread", "kind", "name", "phase",
                              "device", "trace", "site_id", "args", "region", "buffer")),
    "TensorDesc": (TensorDesc._fields, ("tensor_id", "storage", "shape", "dtype", "layout",
                                        "memory_config", "buffer")),
    "BufferDesc": (BufferDesc._fields, ("device", "buffer_type", "address", "size", "page_size",
                                        "num_pages")),
    "Event": (tuple(f.name for f in fields(Event)),
              ("seq", "kind", "name", "phase", "t_ns", "dur_ns", "thread", "device", "cq", "trace",
               "parent", "callsite", "status", "error", "args", "inputs", "outputs", "buffer",
               "region")),
}  # fmt: skip
for _name, (_declared, _assumed) in _ORDERS.items():
    if _declared != _assumed:
        raise ImportError(f"decode.py, store/ext/pipeline.c and recorder/ext (which build and"
                          f" read records by position) assume {_name} fields in the order"
                          f" {_assumed}, records.py declares {_declared}")
