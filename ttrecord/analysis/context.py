"""What every detector needs to know besides the events themselves, derived once per analysis.

Detectors are pure functions of the event stream, but several of them ask the same questions
(which calls are the user's own, what a trace reads and writes, where an audit region starts),
so those answers are computed here, lazily and at most once, from the events alone. A test can
build a context from a hand-made event list; `analyze()` adds what only the session row knows
(the run's status and working folder).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING

from ttrecord.analysis.facts import EventFacts, SessionFacts
from ttrecord.analysis.trace_overlap import Spans, TraceWindow
from ttrecord.events import CALL_KINDS, BufferRef, CallSite, Event, Kind, Phase, Status

if TYPE_CHECKING:
    from ttrecord.analysis.trace_region import Region as TraceRegion
    from ttrecord.analysis.value_flow import ValueFlow

RangeKey = tuple[int, str]  # (device, buffer type)


@dataclass(slots=True)
class Access:
    """One footprint a captured op touched."""

    buffer: BufferRef
    seq: int  # the captured call that touched it
    role: str  # "read", "write" (into a buffer that already existed) or "new" (created here)
    tensor_id: int | None = None
    shape: tuple[int, ...] = ()
    dtype: str | None = None
    layout: str | None = None


@dataclass(eq=False)
class TraceInfo:
    """One captured trace: where it began and ended, what it touched, when it ran."""

    device: int | None
    trace_id: int
    begin: Event
    end: Event | None = None
    release: Event | None = None
    executes: list[Event] = field(default_factory=list)
    accesses: list[Access] = field(default_factory=list)
    ops: int = 0
    raised_inside: bool = False  # a call inside the capture raised (e.g. a TT_FATAL)
    end_raised: Event | None = None  # end_trace_capture was called and raised (region too small)
    freed_inside: set[tuple[int, str, int]] = field(default_factory=set)
    # input buffer -> position in `accesses` where the capture freed it (for `_refills`)
    freed_at: dict[tuple[int, str, int], int] = field(default_factory=dict)
    # Inputs freed inside the capture and allocated again on exactly their footprint with their
    # spec before it ended (tt-metal's executors): buffer -> the allocation holding the input now
    refilled: dict[tuple[int, str, int], int] = field(default_factory=dict)

    @property
    def key(self) -> tuple[int | None, int]:
        return (self.device, self.trace_id)

    @property
    def ended(self) -> Event:
        """`end` of a capture known to have ended (rules keep only those: `end is not None`)."""
        assert self.end is not None, f"trace {self.trace_id} was never captured to its end"
        return self.end

    def live_at(self, seq: int) -> bool:
        """Captured and not yet released at `seq`."""
        if self.end is None or self.end.seq >= seq:
            return False
        return self.release is None or self.release.seq > seq

    @cached_property
    def produced(self) -> set[tuple[int, str, int]]:
        """Buffers the capture itself created (its intermediates and outputs)."""
        return {buffer_key(a.buffer) for a in self.accesses if a.role == "new"}

    def inputs(self) -> list[Access]:
        """Reads of buffers that existed before the capture: the trace's inputs, one per buffer."""
        seen: set[tuple[int, str, int]] = set()
        out = []
        for acc in self.accesses:
            k = buffer_key(acc.buffer)
            if acc.role == "read" and k not in self.produced and k not in seen:
                seen.add(k)
                out.append(acc)
        return out

    def kept(self) -> list[Access]:
        """Buffers the capture created and left allocated: outputs the program holds on to."""
        seen: set[tuple[int, str, int]] = set()
        out = []
        for acc in self.accesses:
            k = buffer_key(acc.buffer)
            if acc.role == "new" and k not in self.freed_inside and k not in seen:
                seen.add(k)
                out.append(acc)
        return out

    @cached_property
    def read_inputs(self) -> RangeIndex:
        """The ranges of its inputs, for an overlap test (`inputs()` once, at first use)."""
        return RangeIndex(self.inputs())

    @cached_property
    def footprint(self) -> RangeIndex:
        return RangeIndex(self.accesses)

    @cached_property
    def window(self) -> TraceWindow:
        """What TR004's overlap rule needs of it (`trace_overlap`); for ended traces."""
        assert self.end is not None
        return TraceWindow(self.device, self.end.seq, self.release.seq if self.release else None,
                           [e.seq for e in self.executes], self.footprint.spans)  # fmt: skip

    @cached_property
    def written(self) -> RangeIndex:
        return RangeIndex([a for a in self.accesses if a.role != "read"])


def buffer_key(buf: BufferRef) -> tuple[int, str, int]:
    return (buf.device, buf.buffer_type, buf.address)


class RangeIndex:
    """Bank-local ranges per (device, buffer type), merged for a fast overlap test.

    A trace can touch thousands of buffers and a long run allocates millions of times, so the
    test is a bisect on merged intervals; the original accesses are scanned only on a hit.
    """

    def __init__(self, accesses: Sequence[Access]) -> None:
        self._accesses: dict[RangeKey, list[Access]] = {}
        for acc in accesses:
            self._accesses.setdefault((acc.buffer.device, acc.buffer.buffer_type), []).append(acc)
        self.spans: dict[RangeKey, Spans] = {
            key: Spans((a.buffer.address, a.buffer.end) for a in accs)
            for key, accs in self._accesses.items()
        }
        # Keys holding a sharded buffer: there an address hit is decided per access, by
        # placement (`ttrecord.placement`); the merged spans know addresses only.
        self._placed = {key for key, accs in self._accesses.items()
                        if any(a.buffer.cores is not None for a in accs)}  # fmt: skip

    def hits(self, buf: BufferRef) -> bool:
        key = (buf.device, buf.buffer_type)
        spans = self.spans.get(key)
        if spans is None or buf.size <= 0 or not spans.hits(buf.address, buf.end):
            return False
        if buf.cores is None or key not in self._placed:
            return True  # one side is on every bank: the address decides
        return any(a.buffer.overlaps(buf) for a in self._accesses[key])

    def intervals(self) -> Iterator[tuple[int, str, int, int]]:
        """Merged ranges: (device, buffer type, start, end)."""
        for (device, btype), spans in self.spans.items():
            for start, end in zip(spans.starts, spans.ends, strict=True):
                yield device, btype, start, end

    def probes(self) -> Iterator[BufferRef]:
        """What another index is asked about to find an overlap with this one: the merged
        ranges, or where a sharded buffer is, each buffer with its cores."""
        for device, btype, start, end in self.intervals():
            if (device, btype) not in self._placed:
                yield BufferRef(device, btype, start, end - start)
        for key in self._placed:
            for acc in self._accesses[key]:
                yield acc.buffer

    def overlapping(self, buf: BufferRef) -> list[Access]:
        if not self.hits(buf):
            return []
        return [a for a in self._accesses[(buf.device, buf.buffer_type)] if a.buffer.overlaps(buf)]


@dataclass(slots=True)
class RegionInstance:
    """One call of an audited function: a would-be capture region in an eager run."""

    name: str
    instance: int
    begin: Event
    end: Event | None
    events: list[Event] = field(default_factory=list)


class Context:
    """Derived facts shared by the detectors. Build with `Context(events, status=..., cwd=...)`."""

    def __init__(self, events: Sequence[Event], status: str = "ok", cwd: str | None = None,
                 backend: str | None = None, facts: EventFacts | SessionFacts | None = None,
                 traces: list[TraceInfo] | None = None, exit_code: int | None = None) -> None:  # fmt: skip
        """`traces`: already derived from these events (the session loader derives them);
        `exit_code`: the program's, when known."""
        self.events = events
        self.status = status
        self.exit_code = exit_code
        self.cwd = cwd
        self.backend = backend
        self.facts = facts if facts is not None else EventFacts(events)
        if traces is not None:
            self.__dict__["traces"] = traces  # fills the cached property

    @property
    def ended_normally(self) -> bool:
        return self.status == "ok"

    @property
    def stopped_itself(self) -> bool:
        """The program ended on its own with a failure exit (`sys.exit(1)` after its own check
        failed): what it left undone (a release) is a consequence of what made it stop."""
        return self.ended_normally and self.exit_code not in (None, 0)

    @cached_property
    def calls(self) -> dict[int, Event]:
        """Call events by seq, to walk from a nested call or an allocation to the user's line."""
        return {ev.seq: ev for ev in self.events if ev.kind in CALL_KINDS}

    def outermost(self, ev: Event) -> Event:
        """The user's own call this event happened inside (itself when top-level)."""
        seen = 0
        while ev.parent is not None and seen < 64:
            parent = self.calls.get(ev.parent)
            if parent is None:
                break
            ev, seen = parent, seen + 1
        return ev

    def same_spec(self, alloc: Event, acc: Access) -> bool:
        """The buffer `alloc` made holds a tensor of the captured input's spec: same footprint,
        and shape, dtype and layout of the tensor the allocating call returned (when known)."""
        buf = alloc.buffer
        if buf is None or buf.size != acc.buffer.size:
            return False
        call = self.calls.get(alloc.parent) if alloc.parent is not None else None
        for ref in call.outputs if call is not None else ():
            if ref.buffer is not None and buffer_key(ref.buffer) == buffer_key(buf):
                return (
                    tuple(ref.shape) == tuple(acc.shape)
                    and (None in (ref.dtype, acc.dtype) or ref.dtype == acc.dtype)
                    and (None in (ref.layout, acc.layout) or ref.layout == acc.layout)
                )
        return True

    def site(self, ev: Event) -> CallSite | None:
        """The user's line for an event: its own call site, else the nearest caller's."""
        while ev.callsite is None and ev.parent is not None:
            parent = self.calls.get(ev.parent)
            if parent is None:
                break
            ev = parent
        return ev.callsite

    @cached_property
    def traces(self) -> list[TraceInfo]:
        return list(_derive_traces(self.events, self.facts))

    @cached_property
    def trace_by_begin(self) -> dict[int, TraceInfo]:
        return {t.begin.seq: t for t in self.traces}

    @cached_property
    def regions(self) -> list[RegionInstance]:
        return _derive_regions(self.events)

    @cached_property
    def trace_regions(self) -> dict[int | None, TraceRegion]:
        """Each device's trace region (size, trace buffers, high-water mark, captures that did
        not fit): TR016 decides on it and the report shows it, from one pass."""
        from ttrecord.analysis.trace_region import scan  # it builds on this module

        return scan(self.events)

    @cached_property
    def flow(self) -> ValueFlow:
        """The value-flow model of device memory every rule that judges memory asks whether a
        value the program uses changed (`value_flow`), one per analysis."""
        from ttrecord.analysis.value_flow import ValueFlow  # it builds on this module

        return ValueFlow(self)


def _derive_traces(
    events: Sequence[Event], facts: EventFacts | SessionFacts
) -> Iterator[TraceInfo]:
    """Walk the stream once, pairing trace calls per (device, trace id) like the runtime does."""
    open_: dict[tuple[int | None, int | None], TraceInfo] = {}  # captured, not released
    info: TraceInfo | None
    capturing: dict[int | None, TraceInfo] = {}  # device -> trace being captured
    done: list[TraceInfo] = []
    calls: dict[int, Event] = {}  # the latest calls inside captures, for their allocations
    for ev in events:
        kind = ev.kind
        if kind is Kind.TRACE_BEGIN:
            if ev.status is Status.OK and ev.trace is not None:
                info = TraceInfo(ev.device, ev.trace, ev)
                capturing[ev.device] = info
                open_[info.key] = info
                done.append(info)
            continue
        if kind is Kind.ALLOC and ev.buffer is not None and ev.buffer.buffer_type == "TRACE":
            # The trace's command buffer, allocated by end_trace_capture.
            info = open_.get((ev.device, ev.trace))
            if info is not None:
                info.accesses.append(Access(ev.buffer, ev.parent or ev.seq, "new"))
            continue
        if capturing and ev.phase is Phase.CAPTURE and kind is not Kind.TRACE_END:
            info = capturing.get(ev.device)
            if info is None and len(capturing) == 1:
                info = next(iter(capturing.values()))
            if info is not None:
                _record_access(info, ev, facts, calls)
            if kind in CALL_KINDS:
                calls[ev.seq] = ev
                if len(calls) > 64:  # an allocation follows its call closely
                    del calls[next(iter(calls))]
        if kind is Kind.TRACE_END:
            info = capturing.pop(ev.device, None)
            if info is not None:
                _refills(info)
            if info is not None and ev.status is Status.OK:
                info.end = ev
            elif info is not None:
                info.end_raised = ev
        elif kind is Kind.TRACE_EXECUTE:
            info = open_.get((ev.device, ev.trace))
            if info is not None:
                info.executes.append(ev)
        elif kind is Kind.TRACE_RELEASE:
            info = open_.pop((ev.device, ev.trace), None)
            if info is not None and ev.status is Status.OK:
                info.release = ev
    yield from done


def _record_access(info: TraceInfo, ev: Event, facts: EventFacts | SessionFacts,
                   calls: dict[int, Event]) -> None:  # fmt: skip
    if ev.status is not Status.OK:
        info.raised_inside = True
    if ev.kind is Kind.ALLOC and ev.buffer is not None:
        info.freed_inside.discard(buffer_key(ev.buffer))
        buf = _placed(ev.buffer, calls.get(ev.parent) if ev.parent is not None else None)
        info.accesses.append(Access(buf, ev.parent or ev.seq, "new", ev.buffer.tensor_id))
        return
    if ev.kind is Kind.FREE and ev.buffer is not None:
        info.freed_inside.add(buffer_key(ev.buffer))
        info.freed_at.setdefault(buffer_key(ev.buffer), len(info.accesses))
        return
    if ev.kind is Kind.OP and ev.parent is None:
        info.ops += 1
    for ref in ev.inputs:
        if ref.buffer is not None and ref.storage == "device":
            info.accesses.append(
                Access(ref.buffer, ev.seq, "read", ref.tensor_id, ref.shape, ref.dtype, ref.layout)
            )
    for ref in ev.outputs:
        if ref.buffer is not None and ref.storage == "device":
            old = facts.existed_before(buffer_key(ref.buffer), info.begin.seq, ev.seq)
            role = "write" if old else "new"
            info.accesses.append(
                Access(ref.buffer, ev.seq, role, ref.tensor_id, ref.shape, ref.dtype, ref.layout)
            )


def _placed(buf: BufferRef, call: Event | None) -> BufferRef:
    """An allocation on the cores of the call's output that holds it (`ttrecord.placement`)."""
    key = buffer_key(buf)
    for ref in call.outputs if call is not None else ():
        if ref.buffer is not None and ref.buffer.cores is not None and buffer_key(ref.buffer) == key:
            return buf.placed(ref.buffer.cores)
    return buf


def _refills(info: TraceInfo) -> None:
    """Identity by evidence: a buffer the capture allocated on exactly the footprint of an
    input it read and then freed, holding a tensor of that input's spec (shape, dtype, layout
    of the read), is that input, not a trace output (tt_cnn's, YOLOv4's and Whisper's traced
    executors free the captured input inside the capture and allocate their persistent input
    there before `end_trace_capture`). Its creation is dropped from the trace's accesses."""
    if not info.freed_at:
        return
    reads: dict[tuple[int, str, int], Access] = {}
    for i, acc in enumerate(info.accesses):
        k = buffer_key(acc.buffer)
        if acc.role == "read" and k in info.freed_at and i < info.freed_at[k]:
            reads.setdefault(k, acc)
    drop: set[int] = set()
    for k, start in info.freed_at.items():
        read = reads.get(k)
        if read is None or k in info.freed_inside or _created_inside(info, k, start):
            continue  # never read before its free, still free at the end, or made in here
        acc = read
        later = [(i, a) for i, a in enumerate(info.accesses[start:], start)
                 if a.role == "new" and buffer_key(a.buffer) == k]  # fmt: skip
        if not later or any(a.buffer.size != acc.buffer.size for _, a in later):
            continue
        if any(a.shape and (tuple(a.shape) != tuple(acc.shape) or None not in (a.dtype, acc.dtype)
               and a.dtype != acc.dtype or None not in (a.layout, acc.layout)
               and a.layout != acc.layout) for _, a in later):  # fmt: skip
            continue  # another tensor on that range: a new buffer of the capture
        drop.update(i for i, _ in later)
        info.refilled[k] = later[0][1].seq
    if drop:
        info.accesses = [a for i, a in enumerate(info.accesses) if i not in drop]


def _created_inside(info: TraceInfo, key: tuple[int, str, int], before: int) -> bool:
    """The buffer freed at position `before` was created inside the capture (an intermediate)."""
    return any(a.role == "new" and buffer_key(a.buffer) == key for a in info.accesses[:before])


def _derive_regions(events: Sequence[Event]) -> list[RegionInstance]:
    instances: list[RegionInstance] = []
    stack: list[RegionInstance] = []
    loose: RegionInstance | None = None  # events tagged with a region but never bracketed
    for ev in events:
        if ev.kind is Kind.REGION_BEGIN:
            args = ev.args or {}
            name = str(args.get("region") or ev.region or "region")
            inst = RegionInstance(name, int(args.get("instance", len(instances))), ev, None)
            instances.append(inst)
            stack.append(inst)
        elif ev.kind is Kind.REGION_END:
            if stack:
                stack.pop().end = ev
        elif ev.phase is Phase.CAPTURE:
            continue
        elif stack:
            stack[-1].events.append(ev)
        elif ev.region is not None:
            if loose is None or loose.name != ev.region:
                loose = RegionInstance(ev.region, len(instances), ev, None)
                instances.append(loose)
            loose.events.append(ev)
        else:
            loose = None
    return instances
