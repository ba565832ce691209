"""Loads the part of a session the detectors need, so `check` stays fast on long runs.

A long run is mostly eager ops, allocations and frees that no hazard rule can involve. The
detectors scan every event of a few kinds (trace calls, syncs, anything inside a capture or an
audit region) and, of the rest, only:
- allocations made while a trace is live that overlap a range the trace touches (TR004), with
  their frees and the call that produced the buffer;
- frees of a trace's inputs, and host-to-device calls that made a new device tensor (TR005);
- the callers of all of these, for the user's line.
Everything else they need about the run (was a buffer already allocated before a capture,
which arguments the eager calls at a call site passed, when a trace's outputs were read and its
inputs written) comes from `SessionFacts`' set-based queries. Each question is a few indexed
queries for the whole session, not one per trace.
"""

from __future__ import annotations

import bisect
import json

from ttrecord.analysis.context import Context, RangeIndex, TraceInfo, buffer_key
from ttrecord.analysis.facts import SessionFacts
from ttrecord.events import BufferRef, Event, Phase

_CORE = (
    "SELECT seq FROM events WHERE kind NOT IN ('op', 'alloc', 'free', 'h2d', 'd2h')"
    " OR phase = 'capture' OR region IS NOT NULL"
)
# Host-to-device calls that made a new device tensor (which may be meant as a trace input).
_NEW_TENSORS = (
    "SELECT t.seq, t.buffer FROM events e JOIN tensors t ON t.seq = e.seq WHERE e.kind = 'h2d'"
    " AND e.phase != 'capture' AND t.role = 'out' AND t.storage = 'device'"
)


def load(session) -> tuple[list[Event], SessionFacts, list[TraceInfo]]:
    """The events the detectors scan (in seq order), the facts for the rest, and the traces.

    Every capture-phase event and trace call is in the first batch, so the traces derived from
    it are those of the whole run."""
    facts = SessionFacts(session)
    core = [seq for (seq,) in session.query(_CORE)]
    events = session.events_at(core)
    facts.prefetch(
        buffer_key(r.buffer) for e in events if e.phase is Phase.CAPTURE
        for r in e.outputs if r.buffer is not None
    )  # fmt: skip
    all_traces = Context(events, facts=facts).traces
    traces = [t for t in all_traces if t.end is not None]
    have = set(core)
    extra = _related(session, facts, traces) - have
    if extra:
        events = sorted(events + session.events_at(extra), key=lambda e: e.seq)
        have |= extra
    for _ in range(3):  # callers of nested calls and allocations, for the user's line
        parents = {e.parent for e in events if e.parent is not None} - have
        if not parents:
            break
        events = sorted(events + session.events_at(parents), key=lambda e: e.seq)
        have |= parents
    return events, facts, all_traces


def _related(session, facts: SessionFacts, traces: list[TraceInfo]) -> set[int]:
    if not traces:
        return set()
    last = session.query("SELECT max(seq) FROM events")[0][0] or 0
    until = {id(t): t.release.seq if t.release else last + 1 for t in traces}
    seqs: set[int] = set()
    # Allocations over trace memory: every buffer overlapping any trace's ranges, once.
    widest = session.query("SELECT max(size) FROM buffers")[0][0] or 0
    union = RangeIndex([a for t in traces for a in t.accesses])
    rows: list[tuple] = []
    for device, btype, start, end in union.intervals():
        rows += session.query(
            # The address lower bound keeps this an index range scan (no buffer is wider).
            "SELECT alloc_seq, free_seq, id, device, buffer_type, address, size FROM buffers"
            " WHERE device = ? AND buffer_type = ? AND address > ? AND address < ?"
            " AND address + size > ?",
            (device, btype, start - widest, end, start),
        )
    rows.sort()
    starts = [r[0] for r in rows]
    over: set[int] = set()
    for t in traces:
        lo = bisect.bisect_right(starts, t.end.seq)
        hi = bisect.bisect_left(starts, until[id(t)])
        for alloc, free, buffer_id, device, btype, address, size in rows[lo:hi]:
            if t.footprint.hits(BufferRef(device, btype, address, size)):
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
        seq for seq, buffer_id in session.query(_NEW_TENSORS) if buffer_id not in input_buffers
    )
    if over:  # the allocation and free events of those buffers, and the calls that made them
        ids = json.dumps(sorted(over))
        seqs.update(seq for (seq,) in session.query(
            "SELECT seq FROM events WHERE buffer IN (SELECT value FROM json_each(?))", (ids,)
        ))  # fmt: skip
        seqs.update(seq for (seq,) in session.query(
            "SELECT min(seq) FROM tensors WHERE role = 'out' AND buffer IN"
            " (SELECT value FROM json_each(?)) GROUP BY buffer",
            (ids,),
        ))  # fmt: skip
    return seqs
