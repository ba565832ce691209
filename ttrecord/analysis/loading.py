"""Loads the part of a session the detectors need, so `check` stays fast on long runs.

A long run is mostly eager ops, allocations and frees that no hazard rule can involve. The
detectors scan every event of a few kinds (trace calls, syncs, anything inside a capture or an
audit region) and, of the rest, only:
- allocations made while a trace is live that overlap a range the trace touches and are still
  allocated at a replay of it (TR004), with their frees and the call that produced the buffer
  (in a decode loop nearly every eager allocation lands on trace memory, but is freed before
  the next replay);
- frees of a trace's inputs, and host-to-device calls that made a new device tensor (TR005);
- the callers of all of these, for the user's line.
Everything else they need about the run (was a buffer already allocated before a capture,
which arguments the eager calls at a call site passed, when a trace's outputs were read and its
inputs written) comes from `SessionFacts`' set-based queries. Each question is a few indexed
queries for the whole session, not one per trace.
"""

from __future__ import annotations

import bisect

from ttrecord.analysis.context import Context, TraceInfo, buffer_key
from ttrecord.analysis.facts import SessionFacts
from ttrecord.events import BufferRef, Event, Kind, Phase
from ttrecord.store.queries import BufferLife

def load(session) -> tuple[list[Event], SessionFacts, list[TraceInfo]]:
    """The events the detectors scan (in seq order), the facts for the rest, and the traces.

    Every capture-phase event and trace call is in the first batch, so the traces derived from
    it are those of the whole run."""
    events, facts = load_core(session)
    core = [e.seq for e in events]
    all_traces = Context(events, facts=facts).traces
    traces = [t for t in all_traces if t.end is not None]
    have = set(core)
    extra = _related(session, facts, traces, _executes(events)) - have
    while extra:
        events = sorted(events + session.events_at(extra), key=lambda e: e.seq)
        have |= extra
        extra = _frees(session, events) - have
    for _ in range(3):  # callers of nested calls and allocations, for the user's line
        parents = {e.parent for e in events if e.parent is not None} - have
        if not parents:
            break
        events = sorted(events + session.events_at(parents), key=lambda e: e.seq)
        have |= parents
    return events, facts, all_traces


def load_core(session) -> tuple[list[Event], SessionFacts]:
    """Trace calls, everything inside a capture or audit region and every other call that is
    not an op or transfer, with the facts for the rest: what the traces are derived from (and
    all a report needs besides the findings)."""
    facts = SessionFacts(session)
    events = session.events_at(session.core_event_seqs())
    facts.prefetch(
        buffer_key(r.buffer) for e in events if e.phase is Phase.CAPTURE
        for r in e.outputs if r.buffer is not None
    )  # fmt: skip
    return events, facts


def _executes(events: list[Event]) -> dict[tuple[int | None, int], list[int]]:
    """Seqs of the execute_trace calls per (device, trace id), in order."""
    runs: dict[tuple[int | None, int], list[int]] = {}
    for e in events:
        if e.kind is Kind.TRACE_EXECUTE and e.trace is not None:
            runs.setdefault((e.device, e.trace), []).append(e.seq)
    return runs


def _frees(session, events: list[Event]) -> set[int]:
    """Where the buffers of the loaded allocations ended: without it, an allocation loaded for
    another reason (an audit region) would look live at a replay it never saw."""
    allocs = [e.seq for e in events if e.kind is Kind.ALLOC and e.phase is not Phase.CAPTURE]
    return session.free_seqs_of(allocs)


def _post_capture_buffers(session, traces: list[TraceInfo], until: dict[int, int],
                          executes: dict[tuple[int | None, int], list[int]],
                          input_keys: set[tuple[int, str, int]]) -> list[BufferLife]:  # fmt: skip
    """The buffers that can matter, in allocation order: those allocated between a trace's capture and its id's last replay (before
    its release), and those at a trace input's address. By allocation time, not address: in a
    decode loop every eager step reuses the addresses the trace touches."""
    windows = []
    for t in traces:
        runs = executes.get((t.device, t.trace_id))
        if runs and runs[-1] > t.end.seq:
            windows.append((t.end.seq, min(until[id(t)], runs[-1])))
    merged: list[list[int]] = []
    for lo, hi in sorted(windows):
        if merged and lo <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], hi)
        else:
            merged.append([lo, hi])
    rows = session.buffers_allocated_within(merged)
    by_type: dict[tuple[int, str], list[int]] = {}
    for device, btype, address in input_keys:
        by_type.setdefault((device, btype), []).append(address)
    for (device, btype), addresses in by_type.items():
        rows += session.buffers_at(device, btype, addresses)
    return sorted(set(rows), key=lambda r: (r.alloc_seq, r.id))


def _related(session, facts: SessionFacts, traces: list[TraceInfo],
             executes: dict[tuple[int | None, int], list[int]]) -> set[int]:  # fmt: skip
    if not traces:
        return set()
    last = session.last_seq()
    until = {id(t): t.release.seq if t.release else last + 1 for t in traces}
    seqs: set[int] = set()
    # A buffer at an input's address matters to TR005 even when freed before any replay.
    input_keys = {buffer_key(acc.buffer) for t in traces for acc in t.inputs()}
    facts.prefetch(input_keys)  # one query, not one per trace input below
    rows = _post_capture_buffers(session, traces, until, executes, input_keys)
    starts = [r.alloc_seq for r in rows]
    over: set[int] = set()
    for t in traces:
        runs = executes.get((t.device, t.trace_id), [])
        lo = bisect.bisect_right(starts, t.end.seq)
        hi = bisect.bisect_left(starts, until[id(t)])
        for row in rows[lo:hi]:
            alloc, free, buffer_id = row.alloc_seq, row.free_seq, row.id
            if buffer_id in over:
                continue
            # TR004 needs the buffer still allocated at a replay of the trace (by its id, as
            # the rule matches execute_trace calls).
            i = bisect.bisect_right(runs, alloc)
            replayed = i < len(runs) and (free is None or runs[i] < free)
            if not replayed and (row.device, row.buffer_type, row.address) not in input_keys:
                continue
            if t.footprint.hits(BufferRef(row.device, row.buffer_type, row.address, row.size)):
                over.add(buffer_id)
                seqs.add(alloc)
                if free is not None:
                    seqs.add(free)
    # Trace inputs: their frees; new tensors made instead of writing into them.
    input_buffers: set[int] = set()
    for t in traces:
        for acc in t.inputs():
            for alloc, free, buffer_id in facts.lifetimes(buffer_key(acc.buffer)):
                if alloc <= acc.seq and (free is None or free > acc.seq):
                    if free is not None:
                        seqs.add(free)
                    input_buffers.add(buffer_id)
    seqs.update(
        seq for seq, buffer_id in session.new_device_tensors() if buffer_id not in input_buffers
    )
    if over:  # the allocation and free events of those buffers, and the calls that made them
        seqs.update(session.buffer_event_seqs(over))
        seqs.update(session.first_writers(over))
    return seqs
