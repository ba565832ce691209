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

One finding per mistake: races of the same two lines are grouped with their count, pinned
where the fix goes: before the second access (where the missing wait belongs), or at the
`record_event` that was recorded before the access it was meant to cover (tt-metal #41720).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Union

from ttrecord.analysis.context import Context, RangeIndex, TraceInfo
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
    stale: _Record | None = None  # the event waited for, recorded before the first access
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

    def record(self, q: Queue, ev: Event) -> None:
        key = queue_args(ev).get("event")
        if key is not None:
            self.events[key] = _Record(_join(self.clock[q], self.host), ev, q)

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
              overlap: BufferRef | None) -> None:  # fmt: skip
        later = second.ev if second is not None else host_ev
        assert later is not None
        stale = None
        if second is not None:
            waited = self.waits.get(second.queue, {}).get(first.queue)
            if waited is not None:
                rec, wait_ev = waited
                if rec.ev.seq < first.ev.seq < wait_ev.seq:
                    stale = rec
        ctx = self.ctx
        latent = self._latent(first, second)
        key = (_site(ctx, first.ev), first.queue[1], second.queue[1] if second else None,
               stale is not None, latent is not None)
        race = self.races.get(key)
        if race is None:
            self.races[key] = _Race(first, second, host_ev, overlap, stale, latent,
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
        if second is None or (first.write and second.write):
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


def _buffers(refs: Sequence) -> list[BufferRef]:
    return [r.buffer for r in refs if r.buffer is not None and r.storage == "device"]


def _range_key(buf: BufferRef, write: bool) -> tuple:
    return ("r", buf.device, buf.buffer_type, buf.address, buf.size, write)


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
        if ev.parent is not None or ev.status is not Status.OK or ev.phase is Phase.CAPTURE:
            continue
        kind = ev.kind
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
        if second is None or race.stale is not None:
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
    return "writes" if acc.write else "reads"


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
    evidence: dict[str, Any] = {
        "first": {"call": first.ev.name, "at": a_at, "cq": qa, "access": "write" if first.write else "read",
                  "event": first.ev.seq},
    }  # fmt: skip
    if race.overlap is not None and race.overlap.size > 0:
        evidence["range"] = range_evidence(race.overlap)
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
                              "event": host_ev.seq}  # fmt: skip
        edge = (f"call ttnn.event_synchronize on an event recorded on CQ {qa} after the read at"
                f" {a_at} (or ttnn.synchronize_device(device, cq_id={qa})) before the host reads"
                f" the result at {b_at}")  # fmt: skip
        evidence["missing_edge"] = edge
        message = (
            f"`{first.ev.name}` at {a_at} is a non-blocking read on CQ {qa}: it returns at once and"
            f" its host tensor is filled when CQ {qa} gets to the read. `{host_ev.name}` at {b_at}"
            f" uses that host tensor before the host waited for CQ {qa}, so it can see data that"
            f" has not arrived. Missing: {edge}."
        )
        return finding("TR012", ctx, host_ev, message, fix=edge[0].upper() + edge[1:] + ".",
                       related=[first.ev.seq], evidence=evidence)  # fmt: skip
    second = race.second
    b_at, qb = where(ctx, second.ev), second.queue[1]
    evidence["second"] = {"call": second.ev.name, "at": b_at, "cq": qb,
                          "access": "write" if second.write else "read", "event": second.ev.seq}  # fmt: skip
    kinds = f"{'write' if first.write else 'read'}/{'write' if second.write else 'read'}"
    base = (
        f"`{first.ev.name}` at {a_at} on CQ {qa} {_what(first)} memory that `{second.ev.name}` at"
        f" {b_at} on CQ {qb} {_what(second)} ({kinds}), and nothing orders the two: the queues"
        f" run on their own, so on a card {'the second can run before the first finishes' if first.write else 'the second can overwrite the data before the first has read it'}."
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
    evidence["missing_edge"] = edge
    message = f"{base} Missing edge: {edge}."
    return finding("TR012", ctx, second.ev, message, fix=edge[0].upper() + edge[1:] + ".",
                   related=[first.ev.seq], evidence=evidence)  # fmt: skip


# -- loading (what `check` reads of a stored session for this rule) ------------------------

def needed_seqs(session: Any, loaded: Sequence[Event], traces: Sequence[TraceInfo]) -> set[int]:
    """Seqs of the calls TR012 needs that the core load left out; empty for a program that
    uses one queue and only blocking reads (nothing can race), so that costs one query.

    For a multi-queue program: every host transfer (blocking reads are host waits) and the
    ops whose buffers overlap a range a command on another queue than 0 touches (only those
    can race with it)."""
    other = session.queued_call_seqs()
    queued = [e for e in loaded if e.kind in (Kind.SYNC, Kind.TRACE_EXECUTE) and cq_of(e) > 0]
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
    return seqs | set(session.top_level_ops_over(sorted(ranges)))
