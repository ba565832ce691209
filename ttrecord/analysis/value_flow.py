"""Where a value in device memory goes: the one question the memory rules ask before they judge.

A structural hazard (a buffer on trace memory at a replay, two queues touching one range with
nothing ordering them) corrupts a result only when the program later *uses* the value that
changed. This module answers that for every rule from one model of device memory, built once per
check (`Context.flow`): per buffer address, the ordered accesses outside captures

- reads: device-to-host reads (the host uses the value), op inputs, and replays of a trace whose
  captured ops read an overlapping range (its inputs);
- writes: op outputs, host-to-device copies into a tensor, and replays of a trace whose captured
  ops write an overlapping range;
- ends: the buffer's free, or the next allocation at its address.

A value is *used* when a host read or a replay reads it, or an op reads it and one of that op's
results is used in turn (followed through up to `_MAX_DEPTH` ops). A warm-up whose results are
never read, or a scratch tensor consumed before the replay that overwrites it, uses nothing
after the hazard: the rules report those as latent (info), saying why the run was safe.

The model is read from `Context.facts` (the event list a test built, or indexed queries on a
session), so a long run pays only for the buffers a rule asks about, in one batch per rule; when
following a value would take more than `_MAX_FETCHES` lookups the answer is "used" (the rule
then keeps its error).
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ttrecord.events import BufferRef, Event, Kind

if TYPE_CHECKING:
    from ttrecord.analysis.context import Context, TraceInfo

Key = tuple[int, str, int]  # (device, buffer type, address)
_MAX_DEPTH = 8  # ops a value is followed through
_MAX_FETCHES = 256  # event lookups per question before assuming "used"
_NOT_A_READ = ("deallocate", "allocate_tensor_on_device", "empty", "empty_like")

# Access kinds on a buffer's timeline, in the order they apply at one seq (an in-place op
# reads its input before it writes it).
READ, WRITE, END = 0, 1, 2


@dataclass(frozen=True, slots=True)
class Use:
    """The first use of a value: the access that used it and the ops it flowed through."""

    seq: int
    how: str  # "host read", "op input", "replay input"
    event: Event | None
    trace: int | None = None  # the trace replayed, for a replay input
    through: tuple[int, ...] = ()  # seqs of the ops between the value and its use

    def describe(self, ctx: Context) -> str:
        from ttrecord.analysis.rules import where

        ev = self.event
        what = f"`{ev.name}` at {where(ctx, ev)}" if ev is not None else f"event {self.seq}"
        if self.how == "replay input":
            what = f"trace {self.trace}'s replay ({what})"
        hops = f" through {len(self.through)} op(s)" if self.through else ""
        return f"{self.how} by {what}{hops}"


@dataclass(slots=True)
class _Budget:
    fetches: int = 0
    exhausted: bool = False

    def spend(self) -> bool:
        self.fetches += 1
        if self.fetches > _MAX_FETCHES:
            self.exhausted = True
        return not self.exhausted


def key_of(buf: BufferRef) -> Key:
    return (buf.device, buf.buffer_type, buf.address)


class ValueFlow:
    """The value-flow model of one run's device memory (see the module docstring)."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self._lines: dict[Key, list[tuple[int, int]]] = {}
        self._events: dict[int, Event | None] = {}
        self._op_used: dict[int, Use | None] = {}
        # Replayed traces by the end of their capture, for the window a question asks about.
        self._traces = sorted((t for t in ctx.traces if t.end is not None and t.executes),
                              key=lambda t: t.ended.seq)  # fmt: skip
        self._ends = [t.ended.seq for t in self._traces]
        self._execs = {id(t): [e.seq for e in t.executes] for t in self._traces}
        # The latest release among the traces up to each one (end order): a backward scan for
        # the traces live in a window stops where none captured earlier is still live.
        self._live_to: list[float] = []
        latest = 0.0
        for t in self._traces:
            latest = max(latest, float("inf") if t.release is None else t.release.seq)
            self._live_to.append(latest)

    # -- the model ------------------------------------------------------------------------
    def prefetch(self, keys: Iterable[Key]) -> None:
        """Read the accesses of these addresses in one batch (one query each on a session)."""
        wanted = set(keys) - self._lines.keys()
        if not wanted:
            return
        facts = self.ctx.facts
        lines: dict[Key, list[tuple[int, int]]] = {k: [] for k in wanted}
        for key, seqs in facts.uses(wanted).items():
            lines[key] += [(s, READ) for s in seqs]
        for key, seqs in facts.writes(wanted).items():
            lines[key] += [(s, WRITE) for s in seqs]
        for key in wanted:
            open_ = False
            for alloc, free, _ in facts.lifetimes(key):
                if open_:  # the previous buffer here was never seen freed: this ends it
                    lines[key].append((alloc, END))
                if free is not None:
                    lines[key].append((free, END))
                open_ = free is None
            lines[key].sort()
        self._lines.update(lines)

    def accesses(self, buf: BufferRef) -> list[tuple[int, int]]:
        """(seq, READ / WRITE / END) of the program's accesses at `buf`'s address, in order."""
        return self._line(key_of(buf))

    def _line(self, key: Key) -> list[tuple[int, int]]:
        if key not in self._lines:
            self.prefetch([key])
        return self._lines[key]

    def _event(self, seq: int, budget: _Budget) -> Event | None:
        if seq in self._events:
            return self._events[seq]
        ev = self.ctx.calls.get(seq)
        if ev is None and budget.spend():
            ev = self.ctx.facts.event(seq)
        self._events[seq] = ev
        return ev

    def _replays(self, buf: BufferRef, after: int, until: int | None
                 ) -> list[tuple[int, int, TraceInfo | None, Event | None]]:  # fmt: skip
        """(seq, READ or WRITE, trace, execute) of the replays in (after, until) that touch
        `buf`'s range: a replay reads what its capture read of memory older than the capture
        (its inputs) and writes what it wrote or created."""
        out: list[tuple[int, int, TraceInfo | None, Event | None]] = []
        stop = len(self._ends) if until is None else bisect.bisect_left(self._ends, until)
        for i in range(stop - 1, -1, -1):  # captured before the window ends, newest first
            if self._live_to[i] <= after:
                break  # this one and every earlier one was released before the window
            t = self._traces[i]
            if t.device != buf.device or (t.release is not None and t.release.seq <= after):
                continue
            seqs = self._execs[id(t)]
            lo = bisect.bisect_right(seqs, after)
            hi = len(seqs) if until is None else bisect.bisect_left(seqs, until)
            if lo >= hi:
                continue
            reads = t.read_inputs.hits(buf)
            writes = t.written.hits(buf)
            for ex in t.executes[lo:hi] if reads or writes else ():
                if reads:
                    out.append((ex.seq, READ, t, ex))
                if writes:
                    out.append((ex.seq, WRITE, t, ex))
        return out

    def window(self, buf: BufferRef, after: int, until: int | None) -> list[tuple[int, int]]:
        """The program's accesses at `buf`'s address strictly between `after` and `until`."""
        line = self._line(key_of(buf))
        lo = bisect.bisect_right(line, (after, END + 1))
        hi = len(line) if until is None else bisect.bisect_left(line, (until, READ))
        return line[lo:hi]

    # -- the questions ----------------------------------------------------------------------
    def first_use(self, buf: BufferRef, after: int, until: int | None = None, *,
                  ignore_writes_of: TraceInfo | None = None,
                  budget: _Budget | None = None) -> Use | None:  # fmt: skip
        """The first use of the value `buf` holds right after seq `after`, before the program
        writes it again, frees it or `until`; None when nothing uses it. Replays of
        `ignore_writes_of` do not end the value (the rule asks whether *their* damage is read)."""
        budget = budget or _Budget()
        return self._first_use(buf, after, until, ignore_writes_of, budget, ())

    def steps(self, buf: BufferRef, after: int, until: int | None, *, ignore_writes_of: TraceInfo | None = None
              ) -> list[tuple[int, int, TraceInfo | None, Event | None]]:  # fmt: skip
        """The timeline a value at `buf`'s address lives on between `after` and `until`:
        (seq, READ / WRITE / END, the trace replayed or None, its execute) in order, the
        program's own accesses and the replays that read or write the range together."""
        out: list[tuple[int, int, TraceInfo | None, Event | None]] = [
            (s, k, None, None) for s, k in self.window(buf, after, until)
        ]
        out += [r for r in self._replays(buf, after, until) if not (r[1] == WRITE and r[2] is ignore_writes_of)]
        out.sort(key=lambda s: (s[0], s[1]))
        return out

    def _first_use(self, buf: BufferRef, after: int, until: int | None, ignore: TraceInfo | None,
                   budget: _Budget, through: tuple[int, ...]) -> Use | None:  # fmt: skip
        for seq, kind, trace, ex in self.steps(buf, after, until, ignore_writes_of=ignore):
            if kind == END:
                return None
            if trace is not None:
                if kind == READ:
                    return Use(seq, "replay input", ex, trace.trace_id, through)
                return None  # the replay wrote over it
            if kind == WRITE:
                return None  # overwritten (an in-place op's own read came just before)
            use = self._read_use(seq, ignore, budget, through)
            if use is not None:
                return use
            if budget.exhausted:
                return Use(seq, "op input", self._events.get(seq), None, through)
        return None

    def _read_use(self, seq: int, ignore: TraceInfo | None, budget: _Budget,
                  through: tuple[int, ...]) -> Use | None:  # fmt: skip
        """Whether the call at `seq`, which takes the value as input, uses it."""
        ev = self._event(seq, budget)
        if ev is None:
            return Use(seq, "op input", None, None, through)  # unknown call: assume it does
        if ev.kind is Kind.D2H:
            return Use(seq, "host read", ev, None, through)
        if ev.kind is Kind.H2D or ev.name.rsplit(".", 1)[-1] in _NOT_A_READ:
            return None  # fills it, or frees it: reads nothing
        if ev.kind is not Kind.OP:
            return Use(seq, "op input", ev, None, through)
        if len(through) >= _MAX_DEPTH:
            return Use(seq, "op input", ev, None, through)
        if not through and seq in self._op_used:
            return self._op_used[seq]
        outs = [r.buffer for r in ev.outputs if r.buffer is not None and r.storage == "device"]
        if not outs:
            # An op that leaves nothing on the device (a host result): the host has the value.
            found: Use | None = Use(seq, "op input", ev, None, through)
        else:
            self.prefetch(key_of(b) for b in outs)
            found = None
            for out in outs:
                found = self._first_use(out, seq, None, ignore, budget, (*through, seq))
                if found is not None:
                    break
        if not through:
            self._op_used[seq] = found
        return found

    def op_results_used(self, op: Event) -> Use | None:
        """Whether any result `op` wrote to the device is used (its own reads are the question
        of whoever asks: a race on its input matters only through what it computed)."""
        budget = _Budget()
        self._events.setdefault(op.seq, op)
        if op.kind is Kind.D2H:
            return Use(op.seq, "host read", op)
        if op.kind is Kind.TRACE_EXECUTE:
            return Use(op.seq, "replay input", op, op.trace)
        return self._read_use(op.seq, None, budget, ())

    def prefetch_buffers(self, bufs: Sequence[BufferRef]) -> None:
        self.prefetch(key_of(b) for b in bufs)
