"""TR012 command-queue race: conflicting accesses on two command queues that nothing orders.

A device with two command queues (CQs) runs each queue in order, on its own; the host goes on
after enqueuing. The only orderings are (ttnn 0.81.1):
- program order within one queue;
- `record_event(device, cq)` then `wait_for_event(other_cq, event)`: what `other_cq` runs after
  the wait comes after everything enqueued on `cq` before the record;
- the host learning that work finished: a blocking read (`to_torch`, `cpu()`, `from_device`),
  a blocking `execute_trace` (the default), `event_synchronize(event)`,
  `synchronize_device(device, cq_id=None)` (every queue when `cq_id` is None), closing the
  device. What the host enqueues after that comes after the work it waited for.
Host-to-device writes, `blocking=False` reads and replays do not make the host wait.

Each queue command gets a vector clock (one counter per queue, a few entries), so "is A
ordered before B" is one comparison. Each queue keeps its recent accesses in access order,
one entry per footprint (a buffer range, or a trace's read or write set): a new access on
another queue scans that list from the newest entry back only until the first entry its clock
already covers, so a correct program costs O(1) per access and a racy one O(distinct
footprints). A replay's read and write sets come from its capture's ops (`Context.traces`),
tested by bisection on merged ranges. A host read of a `blocking=False` readback's host tensor
before the host waited for that read is a race of the host with the queue.

Frees and trace releases are host actions that take effect at once (tt-metal's
`MeshDevice::release_mesh_trace` and a buffer's deallocation return the memory to the
allocator without waiting for the device): they count as writes of the freed range (a
release: of the trace's buffer and every range its replays touch) by the host's default
queue. One made while a command that uses that memory on another queue may still be in flight
(nothing made the host, or the freeing queue, wait for it) is a race: the memory can be handed
out and overwritten while that queue still reads it (tt-xla #5828: a trace released under a
non-blocking replay hung a server). The same queue's commands are ordered before any reuse by
program order, so `y = op(x); ttnn.deallocate(x)` on one queue is not one.

Each finding names where the raced buffer was allocated and, for each call, which argument
touched it (`input_tensor`, `output_tensor=`, the trace id), as CUDA's stream sanitizer does.

One finding per mistake: races of the same two lines are grouped with their count, pinned
where the fix goes: before the second access (where the missing wait belongs), or at the
`record_event` that was recorded before the access it was meant to cover (tt-metal #41720).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Union

from ttrecord.analysis.context import Context, RangeIndex, TraceInfo, buffer_key
from ttrecord.analysis.rules import finding, range_evidence, where
from ttrecord.events import BufferRef, Event, Kind, Phase, Status
from ttrecord.findings import Finding, Severity

Queue = tuple[Union[int, None], int]  # (device, cq)
Clock = dict[Queue, int]
Footprint = Union[BufferRef, RangeIndex]
_SYNC_ALL = frozenset({"synchronize_device", "synchronize_devices", "Synchronize"})
_NO_ACCESS = frozenset({"deallocate", "allocate_tensor_on_device"})
_MAX_FLOW_QUESTIONS = 256


def queue_args(ev: Event) -> dict[str, Any]:
    q = (ev.args or {}).get("queue")
    return q if isinstance(q, dict) else {}


def cq_of(ev: Event) -> int:
    """The command queue a call went to (CQ 0 unless it said otherwise)."""
    cq = queue_args(ev).get("cq")
    if cq is None:
        cq = ev.cq
    return int(cq) if cq is not None else 0


def _join(a: Clock, b: Clock) -> Clock:
    if not b:
        return dict(a)
    out = dict(a)
    for q, k in b.items():
        if out.get(q, 0) < k:
            out[q] = k
    return out


@dataclass(slots=True)
class _Access:
    queue: Queue
    k: int  # position of the command in its queue
    ev: Event
    footprint: Footprint
    write: bool
    frees: bool = False  # a free or a trace release: the host gives the memory back


@dataclass(slots=True)
class _Record:
    """A record_event: the clock it covers and where it was recorded."""

    clock: Clock
    ev: Event
    queue: Queue


@dataclass
class _Race:
    first: _Access
    second: _Access | None  # None: the host read `host_ev`
    host_ev: Event | None
    overlap: BufferRef | None
    raced: BufferRef | None = None  # the whole buffer the first access touched there
    stale: _Record | None = None  # the event waited for, recorded before the first access
    covering: _Record | None = None  # an event recorded on the first queue after it, not waited for
    latent: str | None = None  # why no value the program uses depended on the order
    count: int = 1
    seqs: list[int] = field(default_factory=list)
    # Other lines of the second queue that race with the same first access: one wait before
    # the first of them (in program order) orders them all, so they are one mistake.
    also: dict[tuple, list] = field(default_factory=dict)  # site -> [event, count]


class _Checker:
    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.count: dict[Queue, int] = {}
        self.clock: dict[Queue, Clock] = {}
        self.host: Clock = {}
        self.events: dict[str, _Record] = {}
        self.waits: dict[Queue, dict[Queue, tuple[_Record, Event]]] = {}
        self.recent: dict[Queue, OrderedDict[tuple, _Access]] = {}
        self.queues_of: dict[Any, list[Queue]] = {}
        self.pending: dict[int, _Access] = {}  # host tensor id -> the non-blocking read
        self.races: dict[tuple, _Race] = {}
        self.last_record: dict[Queue, _Record] = {}  # the latest record_event on each queue
        self.traces = {t.key: t for t in ctx.traces}
        self._sets: dict[int, tuple[RangeIndex, RangeIndex]] = {}
        self._pairs: dict[tuple[int, int], BufferRef | None] = {}
        self._asked = 0  # value-flow questions asked (bounded: a racy program has many races)

    # -- happens-before ----------------------------------------------------------------
    def _queue(self, device: Any, cq: int) -> Queue:
        q = (device, cq)
        if q not in self.count:
            self.count[q] = 0
            self.clock[q] = {}
            self.recent[q] = OrderedDict()
            self.queues_of.setdefault(device, []).append(q)
        return q

    def command(self, q: Queue, ev: Event, accesses: list[tuple[Footprint, tuple, bool]]) -> Clock:
        clk = _join(self.clock[q], self.host)
        self.count[q] = k = self.count[q] + 1
        clk[q] = k
        self.clock[q] = clk
        for fp, key, write in accesses:
            acc = _Access(q, k, ev, fp, write)
            self._check(acc, clk)
            recent = self.recent[q]
            recent[key] = acc
            recent.move_to_end(key)
        return clk

    def _check(self, acc: _Access, clk: Clock) -> None:
        for other in self.queues_of[acc.queue[0]]:
            if other == acc.queue:
                continue
            known = clk.get(other, 0)
            for prev in reversed(self.recent[other].values()):
                if prev.k <= known:
                    break
                if prev.write or acc.write:
                    overlap = self._overlap(prev.footprint, acc.footprint)
                    if overlap is not None:
                        self._race(prev, acc, None, overlap)

    def free(self, q: Queue, ev: Event, buf: BufferRef) -> None:
        """The host freed `buf`: a race with each access to it still in flight on another
        queue that neither the host nor `q` waited for."""
        hits: list[tuple[_Access, BufferRef]] = []
        for prev in self._in_flight_elsewhere(q):
            overlap = self._overlap(prev.footprint, buf)
            if overlap is not None and overlap.size > 0:
                hits.append((prev, overlap))
        if not hits:
            return  # the common case: asks nothing of the session
        allocated = _allocated_seq(self.ctx, buf, ev.seq)
        acc = _Access(q, 0, ev, buf, True, frees=True)
        for prev, overlap in hits:
            if allocated is None or prev.ev.seq > allocated:  # not an older buffer there
                self._race(prev, acc, None, overlap, raced=buf)

    def release(self, q: Queue, ev: Event, info: TraceInfo) -> None:
        """The host released a trace: a race with a replay of it still in flight on another
        queue (ttnn frees the trace buffer at once, under the replay reading it)."""
        buf = _trace_buffer(info)
        acc = _Access(q, 0, ev, buf or BufferRef(0, "", 0, 0), True, frees=True)
        for prev in self._in_flight_elsewhere(q):
            if prev.ev.kind is Kind.TRACE_EXECUTE and prev.ev.trace == ev.trace and not prev.write:
                self._race(prev, acc, None, buf, raced=buf)

    def _in_flight_elsewhere(self, q: Queue) -> Iterator[_Access]:
        """Accesses on the device's other queues that neither the host nor `q` has waited for,
        newest first: what a host free or release at this point may pull memory from under."""
        clk = _join(self.clock[q], self.host)
        for other in self.queues_of.get(q[0], ()):
            if other == q:
                continue
            known = clk.get(other, 0)
            for prev in reversed(self.recent[other].values()):
                if prev.k <= known:
                    break
                yield prev

    def record(self, q: Queue, ev: Event) -> None:
        key = queue_args(ev).get("event")
        if key is not None:
            self.events[key] = self.last_record[q] = _Record(_join(self.clock[q], self.host), ev, q)

    def wait(self, cq: int, ev: Event) -> None:
        rec = self.events.get(queue_args(ev).get("event"))  # type: ignore[arg-type]
        if rec is None:
            return
        q = self._queue(rec.queue[0], cq)
        self.clock[q] = _join(self.clock[q], rec.clock)
        self.waits.setdefault(q, {})[rec.queue] = (rec, ev)

    def host_waits(self, clock: Clock) -> None:
        self.host = _join(self.host, clock)

    # -- footprints ----------------------------------------------------------------------
    def trace_sets(self, info: TraceInfo) -> tuple[RangeIndex, RangeIndex]:
        sets = self._sets.get(id(info))
        if sets is None:
            accesses = [a for a in info.accesses if a.buffer.buffer_type != "TRACE"]
            reads = RangeIndex([a for a in accesses if a.role == "read"])
            writes = RangeIndex([a for a in accesses if a.role != "read"])
            sets = self._sets[id(info)] = (reads, writes)
        return sets

    def _overlap(self, a: Footprint, b: Footprint) -> BufferRef | None:
        if isinstance(a, BufferRef) and isinstance(b, BufferRef):
            if not a.overlaps(b):
                return None
            lo, hi = max(a.address, b.address), min(a.end, b.end)
            return BufferRef(a.device, a.buffer_type, lo, hi - lo)
        if isinstance(a, BufferRef) or isinstance(b, BufferRef):
            buf, index = (a, b) if isinstance(a, BufferRef) else (b, a)
            assert isinstance(buf, BufferRef) and isinstance(index, RangeIndex)
            hit = index.overlapping(buf)
            if not hit:
                return None
            first = min(hit, key=lambda x: x.buffer.address).buffer
            lo, hi = max(first.address, buf.address), min(first.end, buf.end)
            return BufferRef(buf.device, buf.buffer_type, lo, max(hi - lo, 0))
        key = (id(a), id(b))
        if key not in self._pairs:
            found = None
            assert isinstance(a, RangeIndex) and isinstance(b, RangeIndex)
            for probe in a.probes():  # by placement where a buffer is sharded
                if b.hits(probe):
                    found = self._overlap(probe, b)
                    break
            self._pairs[key] = found
        return self._pairs[key]

    # -- races ---------------------------------------------------------------------------
    def _race(self, first: _Access, second: _Access | None, host_ev: Event | None,
              overlap: BufferRef | None, raced: BufferRef | None = None) -> None:  # fmt: skip
        later = second.ev if second is not None else host_ev
        assert later is not None
        stale = covering = None
        if second is not None and not second.frees:
            latest = self.last_record.get(first.queue)
            if latest is not None and latest.ev.seq > first.ev.seq:
                # An event recorded after the first access exists: the program waited for an
                # older one instead, and the fix is waiting for this one before the second.
                covering = latest
            waited = self.waits.get(second.queue, {}).get(first.queue)
            if waited is not None and covering is None:
                rec, wait_ev = waited
                if rec.ev.seq < first.ev.seq < wait_ev.seq:
                    stale = rec
        ctx = self.ctx
        latent = self._latent(first, second)
        key = (_site(ctx, first.ev), first.queue[1], second.queue[1] if second else None,
               stale is not None, latent is not None,
               _site(ctx, second.ev) if second is not None and second.frees else None)  # each free its own
        race = self.races.get(key)
        if race is None:
            if raced is None and overlap is not None:
                raced = _whole(first.footprint, overlap)
            self.races[key] = _Race(first, second, host_ev, overlap, raced, stale, covering, latent,
                                    seqs=[first.ev.seq, later.seq])  # fmt: skip
            return
        race.count += 1
        pinned = race.second.ev if race.second is not None else race.host_ev
        site = _site(ctx, later)
        if pinned is not None and site != _site(ctx, pinned):
            other = race.also.setdefault(site, [later, 0])
            other[1] += 1

    def _latent(self, first: _Access, second: _Access | None) -> str | None:
        """Why this race changed no value the program uses, or None when it may have: an op
        that reads racing memory matters only through its results (`Context.flow`); a warm-up
        run whose outputs nobody reads is not wrong, only fragile."""
        if second is None or second.frees or (first.write and second.write):
            return None
        reader = second if first.write else first
        if reader.ev.kind is not Kind.OP or self._asked >= _MAX_FLOW_QUESTIONS:
            return None
        self._asked += 1
        if self.ctx.flow.op_results_used(reader.ev) is not None:
            return None
        return (f"the results of `{reader.ev.name}` at {where(self.ctx, reader.ev)}, which reads"
                " the racing memory, are never used (no host read, replay or op whose result is"
                " used reads them), so whichever order the queues ran in, no value the program"
                " uses changed")

    def host_read(self, ev: Event) -> None:
        for ref in ev.inputs:
            if ref.storage != "host" or ref.tensor_id is None:
                continue
            acc = self.pending.pop(ref.tensor_id, None)
            if acc is not None and self.host.get(acc.queue, 0) < acc.k:
                self._race(acc, None, ev, None)


def _site(ctx: Context, ev: Event) -> tuple:
    site = ctx.site(ev)
    return (site.file, site.line) if site is not None else (ev.seq,)


def _whole(footprint: Footprint, overlap: BufferRef) -> BufferRef | None:
    """The buffer of `footprint` that holds `overlap` (a trace's: the first one there)."""
    if isinstance(footprint, BufferRef):
        return footprint
    hit = footprint.overlapping(overlap) if overlap.size > 0 else []
    return min(hit, key=lambda x: x.buffer.address).buffer if hit else None


def _trace_buffer(info: TraceInfo) -> BufferRef | None:
    """The trace's own buffer (its commands), which a release frees."""
    return next((a.buffer for a in info.accesses if a.buffer.buffer_type == "TRACE"), None)


def _allocated_seq(ctx: Context, buf: BufferRef, freed: int) -> int | None:
    """The allocation event of the buffer freed at seq `freed`."""
    for alloc, free, _ in ctx.facts.lifetimes(buffer_key(buf)):
        if free == freed or (alloc < freed and (free is None or free > freed)):
            return alloc
    return None


def _buffers(refs: Sequence) -> list[BufferRef]:
    return [r.buffer for r in refs if r.buffer is not None and r.storage == "device"]


def _range_key(buf: BufferRef, write: bool) -> tuple:
    return ("r", buf.device, buf.buffer_type, buf.address, buf.size, write)


def _freeing_cq(ctx: Context, ev: Event) -> int:
    """The queue a free counts on: its call's (a `deallocate` has none: CQ 0)."""
    call = ctx.calls.get(ev.parent) if ev.parent is not None else None
    return cq_of(call) if call is not None else 0


def _needs_queues(events: Sequence[Event]) -> bool:
    """Whether anything can race: a command on a queue other than 0, or a non-blocking read."""
    for ev in events:
        q = (ev.args or {}).get("queue") if ev.args else None
        if ev.cq or (q and (q.get("cq") or q.get("blocking") is False)):
            return True
    return False


def detect(events: Sequence[Event], ctx: Context) -> list[Finding]:
    if not _needs_queues(events):
        return []  # one queue and blocking reads only: every access is ordered
    check = _Checker(ctx)
    for ev in events:
        kind = ev.kind
        if kind is Kind.FREE:
            if ev.buffer is not None and ev.phase is not Phase.CAPTURE and ev.buffer.device in check.queues_of:
                check.free(check._queue(ev.buffer.device, _freeing_cq(ctx, ev)), ev, ev.buffer)
            continue
        if ev.parent is not None or ev.status is not Status.OK or ev.phase is Phase.CAPTURE:
            continue
        if kind is Kind.TRACE_RELEASE:
            info = check.traces.get((ev.device, ev.trace)) if ev.trace is not None else None
            if info is not None and ev.device in check.queues_of:
                check.release(check._queue(ev.device, cq_of(ev)), ev, info)
            continue
        if kind is Kind.SYNC:
            _sync(check, ev)
            continue
        if kind is Kind.DEVICE_CLOSE:
            for q in check.queues_of.get(ev.device, []):
                check.host_waits(check.clock[q])
            continue
        if kind not in (Kind.OP, Kind.H2D, Kind.D2H, Kind.TRACE_EXECUTE):
            continue
        if check.pending:
            check.host_read(ev)
        if ev.device is None or ev.name.rsplit(".", 1)[-1] in _NO_ACCESS:
            continue
        q = check._queue(ev.device, cq_of(ev))
        accesses: list[tuple[Footprint, tuple, bool]] = []
        if kind is Kind.TRACE_EXECUTE:
            info = check.traces.get((ev.device, ev.trace)) if ev.trace is not None else None
            if info is None or info.end is None:
                continue
            reads, writes = check.trace_sets(info)
            accesses = [(reads, ("t", info.key, False), False), (writes, ("t", info.key, True), True)]
        elif kind is Kind.H2D:
            accesses = [(b, _range_key(b, True), True) for b in _buffers(ev.inputs) + _buffers(ev.outputs)]
        elif kind is Kind.D2H:
            accesses = [(b, _range_key(b, False), False) for b in _buffers(ev.inputs)]
        else:
            outs = _buffers(ev.outputs)
            written = {(b.buffer_type, b.address) for b in outs}
            accesses = [(b, _range_key(b, False), False) for b in _buffers(ev.inputs)
                        if (b.buffer_type, b.address) not in written]  # fmt: skip
            accesses += [(b, _range_key(b, True), True) for b in outs]
        clk = check.command(q, ev, accesses)
        blocking = queue_args(ev).get("blocking", True) is not False
        if kind is Kind.D2H or kind is Kind.TRACE_EXECUTE:
            if blocking:
                check.host_waits(clk)
            elif kind is Kind.D2H:
                read = _Access(q, clk[q], ev, accesses[0][0] if accesses else BufferRef(0, "", 0, 0), False)
                for ref in ev.outputs:
                    if ref.storage == "host" and ref.tensor_id is not None:
                        check.pending[ref.tensor_id] = read
                for ref in ev.inputs:  # copy_device_to_host_tensor fills a host tensor it got
                    if ref.storage == "host" and ref.tensor_id is not None:
                        check.pending[ref.tensor_id] = read
    return [_finding(ctx, race) for race in _fold(ctx, list(check.races.values()))]


def _fold(ctx: Context, races: list[_Race]) -> list[_Race]:
    """One missing wait, one finding: a race between the same two queues whose first access
    was enqueued before the second access of an earlier-reported race is ordered by the same
    wait (placed before that second access), so it is folded under that race."""
    kept: list[_Race] = []
    primary: dict[tuple, _Race] = {}  # (first queue, second queue, latent) -> earliest race
    for race in sorted(races, key=lambda r: r.second.ev.seq if r.second else r.seqs[-1]):
        second = race.second
        if second is None or race.stale is not None or second.frees:
            kept.append(race)
            continue
        pkey = (race.first.queue, second.queue, race.latent is not None)
        p = primary.get(pkey)
        if p is not None and p.second is not None and race.first.ev.seq < p.second.ev.seq \
                and _site(ctx, second.ev) != _site(ctx, p.second.ev):  # fmt: skip
            other = p.also.setdefault(_site(ctx, second.ev), [second.ev, 0])
            other[1] += race.count
            p.count += race.count
            continue
        primary.setdefault(pkey, race)
        kept.append(race)
    order = {id(r): i for i, r in enumerate(races)}
    return sorted(kept, key=lambda r: order[id(r)])


def _sync(check: _Checker, ev: Event) -> None:
    short = ev.name.rsplit(".", 1)[-1]
    qa = queue_args(ev)
    if short == "record_event":
        if ev.device is not None:
            check.record(check._queue(ev.device, cq_of(ev)), ev)
    elif short == "wait_for_event":
        check.wait(cq_of(ev), ev)
    elif short == "event_synchronize":
        rec = check.events.get(qa.get("event"))  # type: ignore[arg-type]
        if rec is not None:
            check.host_waits(rec.clock)
    elif short in _SYNC_ALL:
        cq = qa.get("cq", ev.cq)
        for device, queues in check.queues_of.items():
            if ev.device is not None and device != ev.device:
                continue
            for q in queues:
                if cq is None or q[1] == int(cq):
                    check.host_waits(check.clock[q])


def _what(acc: _Access) -> str:
    if acc.frees:
        return "releases" if acc.ev.kind is Kind.TRACE_RELEASE else "frees"
    return "writes" if acc.write else "reads"


# Names of the tensor parameters of the transfers TR012 meets, as ttnn 0.81.1 binds them.
_TRANSFER_PARAMS = {
    "copy_host_to_device_tensor": ("host_tensor", "device_tensor"),
    "copy_device_to_host_tensor": ("device_tensor", "host_tensor"),
    "cpu": ("self",),
    "to_torch": ("tensor",),
    "from_device": ("tensor",),
    "to_device": ("tensor",),
    "to_memory_config": ("tensor",),
}


def role(ctx: Context, acc: _Access, at: BufferRef | None) -> str:
    """Which argument of the call touched the raced memory `at` (the stream sanitizer's
    "argument" column): a parameter name, `output_tensor=` for an op writing into a tensor it
    was given, the trace id of a replay or release, what freed a buffer."""
    ev = acc.ev
    if ev.kind in (Kind.TRACE_EXECUTE, Kind.TRACE_RELEASE):
        return f"trace_id={ev.trace}"
    if acc.frees:
        call = ctx.calls.get(ev.parent) if ev.parent is not None else None
        if call is None:
            return "its last Python reference dropped"
        return "tensor" if call.name.rsplit(".", 1)[-1] == "deallocate" else f"the tensor `{call.name}` freed"
    short = ev.name.rsplit(".", 1)[-1]

    def hits(ref: Any) -> bool:
        b = ref.buffer
        return b is not None and ref.storage == "device" and (at is None or b.overlaps(at))

    inputs = [r for r in ev.inputs if r.storage == "device" or short in _TRANSFER_PARAMS]
    outputs = [r for r in ev.outputs if hits(r)]
    for i, ref in enumerate(inputs):
        if not hits(ref):
            continue
        names = _TRANSFER_PARAMS.get(short)
        if names is not None and i < len(names):
            return names[i]
        if outputs:
            return "output_tensor= (written in place)"
        devices = [r for r in inputs if r.storage == "device"]
        n = devices.index(ref)
        if len(devices) == 1:
            return "input_tensor"
        if len(devices) == 2:
            return ("input_tensor_a", "input_tensor_b")[n]
        return f"tensor argument {n}"
    return "its result" if outputs else "a tensor argument"


def _call_name(ctx: Context, ev: Event) -> str:
    """A free is named by the call that made it (`ttnn.deallocate`)."""
    if ev.kind is Kind.FREE:
        call = ctx.calls.get(ev.parent) if ev.parent is not None else None
        return call.name if call is not None else "a dropped reference"
    return ev.name


def _call_site(ctx: Context, seq: int) -> str | None:
    """The user's line of the call behind event `seq` (read from the session when the event
    was not loaded)."""
    ev = ctx.calls.get(seq) or ctx.facts.event(seq)
    for _ in range(8):
        if ev is None:
            return None
        if ev.callsite is not None or ev.parent is None:
            break
        ev = ctx.calls.get(ev.parent) or ctx.facts.event(ev.parent)
    return where(ctx, ev) if ev is not None and ev.callsite is not None else None


def _allocation_site(ctx: Context, race: _Race) -> str | None:
    buf = race.raced
    if buf is None:
        return None
    at = race.first.ev.seq
    for alloc, free, _ in ctx.facts.lifetimes(buffer_key(buf)):
        if alloc <= at and (free is None or free >= at):
            return _call_site(ctx, alloc)
    return None


def _finding(ctx: Context, race: _Race) -> Finding:
    f = _first_finding(ctx, race)
    if race.latent is not None:
        f.severity = Severity.INFO
        f.message += (f" Latent in this run: {race.latent}; it corrupts a result as soon as"
                      " those results are read.")  # fmt: skip
        f.evidence["latent"] = race.latent
    if race.also:
        lines = ", ".join(f"`{a['call']}` at {a['at']} ({a['races']}x)" for a in f.evidence["also"])
        f.message += (f" The same unordered access also races with {lines}: the wait that orders"
                      " the first orders those too.")  # fmt: skip
        f.events += [a["event"] for a in f.evidence["also"]]
    return f


def _first_finding(ctx: Context, race: _Race) -> Finding:
    first = race.first
    a_at, qa = where(ctx, first.ev), first.queue[1]
    a_role = role(ctx, first, race.overlap)
    evidence: dict[str, Any] = {
        "first": {"call": first.ev.name, "at": a_at, "cq": qa, "access": "write" if first.write else "read",
                  "event": first.ev.seq, "argument": a_role},
    }  # fmt: skip
    if race.overlap is not None and race.overlap.size > 0:
        evidence["range"] = range_evidence(race.overlap)
    allocated = _allocation_site(ctx, race)
    made = ""
    if allocated is not None:
        evidence["allocated_at"] = allocated
        made = f" The raced buffer was allocated at {allocated}."
    if race.count > 1:
        evidence["races"] = race.count
    if race.also:
        evidence["also"] = [{"call": ev.name, "at": where(ctx, ev), "races": n, "event": ev.seq}
                            for ev, n in list(race.also.values())[:8]]  # fmt: skip
    if race.second is None:
        host_ev = race.host_ev
        assert host_ev is not None
        b_at = where(ctx, host_ev)
        evidence["second"] = {"call": host_ev.name, "at": b_at, "cq": "host", "access": "read",
                              "event": host_ev.seq, "argument": "the host tensor"}  # fmt: skip
        edge = (f"call ttnn.event_synchronize on an event recorded on CQ {qa} after the read at"
                f" {a_at} (or ttnn.synchronize_device(device, cq_id={qa})) before the host reads"
                f" the result at {b_at}")  # fmt: skip
        evidence["missing_edge"] = edge
        message = (
            f"`{first.ev.name}` at {a_at} is a non-blocking read on CQ {qa}: it returns at once and"
            f" its host tensor is filled when CQ {qa} gets to the read. `{host_ev.name}` at {b_at}"
            f" uses that host tensor before the host waited for CQ {qa}, so it can see data that"
            f" has not arrived.{made} Missing: {edge}."
        )
        return finding("TR012", ctx, host_ev, message, fix=edge[0].upper() + edge[1:] + ".",
                       related=[first.ev.seq], evidence=evidence)  # fmt: skip
    second = race.second
    if second.frees:
        return _free_finding(ctx, race, evidence, a_role, made)
    b_at, qb = where(ctx, second.ev), second.queue[1]
    b_role = role(ctx, second, race.overlap)
    evidence["second"] = {"call": second.ev.name, "at": b_at, "cq": qb, "argument": b_role,
                          "access": "write" if second.write else "read", "event": second.ev.seq}  # fmt: skip
    kinds = f"{'write' if first.write else 'read'}/{'write' if second.write else 'read'}"
    base = (
        f"`{first.ev.name}` at {a_at} on CQ {qa} {_what(first)} memory (argument: {a_role}) that"
        f" `{second.ev.name}` at {b_at} on CQ {qb} {_what(second)} (argument: {b_role}) ({kinds}),"
        f" and nothing orders the two: the queues run on their own, so on a card"
        f" {'the second can run before the first finishes' if first.write else 'the second can overwrite the data before the first has read it'}.{made}"
    )  # fmt: skip
    if race.stale is not None:
        rec = race.stale
        r_at = where(ctx, rec.ev)
        edge = (f"record the event on CQ {qa} after `{first.ev.name}` at {a_at}: the one CQ {qb}"
                f" waits for was recorded at {r_at}, before that command was enqueued, so it does"
                " not cover it")  # fmt: skip
        evidence["missing_edge"] = edge
        evidence["stale_event"] = {"recorded_at": r_at, "event": rec.ev.seq}
        message = f"{base} Missing edge: {edge} (tt-metal #41720)."
        return finding("TR012", ctx, rec.ev, message, fix=edge[0].upper() + edge[1:] + ".",
                       related=[first.ev.seq, second.ev.seq], evidence=evidence)  # fmt: skip
    edge = (f"record an event on CQ {qa} after `{first.ev.name}` at {a_at}"
            f" (ttnn.record_event(device, {qa})) and wait for it on CQ {qb} before"
            f" `{second.ev.name}` at {b_at} (ttnn.wait_for_event({qb}, event))")  # fmt: skip
    if race.covering is not None:
        edge = (f"wait on CQ {qb} before `{second.ev.name}` at {b_at} for the event recorded on"
                f" CQ {qa} at {where(ctx, race.covering.ev)}, after `{first.ev.name}` at {a_at}"
                f" (ttnn.wait_for_event({qb}, event))")  # fmt: skip
    evidence["missing_edge"] = edge
    message = f"{base} Missing edge: {edge}."
    return finding("TR012", ctx, second.ev, message, fix=edge[0].upper() + edge[1:] + ".",
                   related=[first.ev.seq], evidence=evidence)  # fmt: skip


def _free_finding(ctx: Context, race: _Race, evidence: dict[str, Any], a_role: str,
                  made: str) -> Finding:  # fmt: skip
    """A free or trace release made while a command using that memory may be in flight."""
    first, second = race.first, race.second
    assert second is not None
    a_at, qa = where(ctx, first.ev), first.queue[1]
    b_at = where(ctx, second.ev)
    b_role = role(ctx, second, race.overlap)
    released = second.ev.kind is Kind.TRACE_RELEASE
    name = _call_name(ctx, second.ev)
    evidence["second"] = {"call": name, "at": b_at, "cq": "host", "argument": b_role,
                          "access": "release" if released else "free", "event": second.ev.seq}  # fmt: skip
    how = "replay" if first.ev.kind is Kind.TRACE_EXECUTE else "command"
    if released:
        what = (f"`{name}` at {b_at} releases trace {second.ev.trace} (argument: {b_role}) while"
                f" its non-blocking replay `{first.ev.name}` at {a_at} on CQ {qa} may still be"
                f" running: ttnn frees the trace buffer at once, under the replay reading its"
                f" commands, and a new allocation or capture can overwrite them (tt-xla #5828: a"
                f" serving hang).")  # fmt: skip
    else:
        what = (f"`{name}` at {b_at} frees memory (argument: {b_role}) that `{first.ev.name}` at"
                f" {a_at} on CQ {qa} {_what(first)} (argument: {a_role}), and the host never waited"
                f" for that {how}: the allocator hands the memory out at once, so a later"
                f" allocation can be written while CQ {qa} still {'writes' if first.write else 'reads'} it.")  # fmt: skip
    edge = (f"make the host wait for CQ {qa} after `{first.ev.name}` at {a_at} before"
            f" `{name}` at {b_at} (ttnn.synchronize_device(device, cq_id={qa}), or"
            f" ttnn.event_synchronize on an event recorded on CQ {qa} after it"
            f"{', or a blocking replay' if first.ev.kind is Kind.TRACE_EXECUTE else ''})")  # fmt: skip
    evidence["missing_edge"] = edge
    message = f"{what}{made} Missing: {edge}."
    return finding("TR012", ctx, second.ev, message, fix=edge[0].upper() + edge[1:] + ".",
                   related=[first.ev.seq], evidence=evidence)  # fmt: skip


# -- loading (what `check` reads of a stored session for this rule) ------------------------

def needed_seqs(session: Any, loaded: Sequence[Event], traces: Sequence[TraceInfo]) -> set[int]:
    """Seqs of the calls TR012 needs that the core load left out; empty for a program that
    uses one queue and only blocking reads (nothing can race), so that costs one query.

    For a multi-queue program: every host transfer (blocking reads are host waits) and the
    ops and frees of buffers that overlap a range a command on another queue than 0 touches
    (only those can race with it)."""
    other = session.queued_call_seqs()
    queued = [e for e in loaded if e.kind in (Kind.SYNC, Kind.TRACE_EXECUTE)
              and ((e.cq or 0) > 0 or (e.args is not None and "queue" in e.args)) and cq_of(e) > 0]
    if not other and not queued:
        return set()
    seqs = set(session.host_transfer_seqs())
    ranges: set[tuple[Any, ...]] = {
        (device, btype, address, address + (size or 0))
        for device, btype, address, size in session.device_ranges_of(other)
    }
    by_key = {t.key: t for t in traces}
    for e in queued:
        info = by_key.get((e.device, e.trace)) if e.trace is not None else None
        if e.kind is Kind.TRACE_EXECUTE and info is not None:
            ranges.update(info.footprint.intervals())
    seqs.update(other)
    seqs |= set(session.host_consumers(other))
    if not ranges:
        return seqs
    ranges_ = sorted(ranges)
    # frees of that memory: a free while another queue may still use it is a race too
    return seqs | set(session.top_level_ops_over(ranges_)) | set(session.frees_over(ranges_))
