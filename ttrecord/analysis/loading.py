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
import json
from typing import TYPE_CHECKING

from ttrecord.analysis.context import Context, TraceInfo, buffer_key
from ttrecord.analysis.facts import SessionFacts
from ttrecord.events import BufferRef, Event, Kind, Phase

if TYPE_CHECKING:
    from ttrecord.store.reader import Session

_CORE = (
    "SELECT seq FROM events WHERE kind NOT IN ('op', 'alloc', 'free', 'h2d', 'd2h')"
    " OR phase = 'capture' OR region IS NOT NULL"
    " OR buffer IN (SELECT id FROM buffers WHERE buffer_type = 'TRACE')"  # TR016: trace buffers
    " OR (phase = 'prep' AND kind = 'op' AND parent IS NULL)"  # TR015: prep runs
    " OR (kind = 'alloc' AND parent IN (SELECT parent FROM events WHERE kind = 'note'"
    " AND name = 'program_cache_miss'))"  # TR014: what a compiling call left allocated
)
# Host-to-device calls that made a new device tensor (which may be meant as a trace input).
_NEW_TENSORS = (
    "SELECT t.seq, t.buffer FROM events e JOIN tensors t ON t.seq = e.seq WHERE e.kind = 'h2d'"
    " AND e.phase != 'capture' AND t.role = 'out' AND t.storage = 'device'"
)


def load(session: Session) -> tuple[list[Event], SessionFacts, list[TraceInfo]]:
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


def load_core(session: Session) -> tuple[list[Event], SessionFacts]:
    """Trace calls, everything inside a capture or audit region and every other call that is
    not an op or transfer, with the facts for the rest: what the traces are derived from (and
    all a report needs besides the findings)."""
    facts = SessionFacts(session)
    events = session.events_at([seq for (seq,) in session.query(_CORE)])
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


def _frees(session: Session, events: list[Event]) -> set[int]:
    """Where the buffers of the loaded allocations ended: without it, an allocation loaded for
    another reason (an audit region) would look live at a replay it never saw."""
    allocs = [e.seq for e in events if e.kind is Kind.ALLOC and e.phase is not Phase.CAPTURE]
    return {seq for (seq,) in session.query(
        "SELECT b.free_seq FROM events e JOIN buffers b ON b.id = e.buffer"
        " WHERE e.seq IN (SELECT value FROM json_each(?)) AND b.free_seq IS NOT NULL",
        (json.dumps(allocs),),
    )}  # fmt: skip


def _post_capture_buffers(session: Session, traces: list[TraceInfo], until: dict[int, int],
                          executes: dict[tuple[int | None, int], list[int]],
                          input_keys: set[tuple[int, str, int]]) -> list[tuple]:  # fmt: skip
    """(alloc, free, id, device, buffer type, address, size) of the buffers that can matter, in
    allocation order: those allocated between a trace's capture and its id's last replay (before
    its release), and those at a trace input's address. By allocation time, not address: in a
    decode loop every eager step reuses the addresses the trace touches."""
    windows = []
    for t in traces:
        runs = executes.get((t.device, t.trace_id))
        if runs and runs[-1] > t.ended.seq:
            windows.append((t.ended.seq, min(until[id(t)], runs[-1])))
    merged: list[list[int]] = []
    for lo, hi in sorted(windows):
        if merged and lo <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], hi)
        else:
            merged.append([lo, hi])
    columns = "b.alloc_seq, b.free_seq, b.id, b.device, b.buffer_type, b.address, b.size"
    rows = session.query(
        f"SELECT {columns} FROM json_each(?) w JOIN buffers b"
        " ON b.alloc_seq > json_extract(w.value, '$[0]')"
        " AND b.alloc_seq < json_extract(w.value, '$[1]')",
        (json.dumps(merged),),
    )
    by_type: dict[tuple[int, str], list[int]] = {}
    for device, btype, address in input_keys:
        by_type.setdefault((device, btype), []).append(address)
    for (device, btype), addresses in by_type.items():
        rows += session.query(
            f"SELECT {columns} FROM buffers b WHERE b.device = ? AND b.buffer_type = ?"
            " AND b.address IN (SELECT value FROM json_each(?))",
            (device, btype, json.dumps(addresses)),
        )
    return sorted(set(rows), key=lambda r: (r[0], r[2]))  # (alloc, id): free may be None


def _related(session: Session, facts: SessionFacts, traces: list[TraceInfo],
             executes: dict[tuple[int | None, int], list[int]]) -> set[int]:  # fmt: skip
    if not traces:
        return set()
    last = session.query("SELECT max(seq) FROM events")[0][0] or 0
    until = {id(t): t.release.seq if t.release else last + 1 for t in traces}
    seqs: set[int] = set()
    # A buffer at an input's address matters to TR005 even when freed before any replay.
    input_keys = {buffer_key(acc.buffer) for t in traces for acc in t.inputs()}
    facts.prefetch(input_keys)  # one query, not one per trace input below
    rows = _post_capture_buffers(session, traces, until, executes, input_keys)
    starts = [r[0] for r in rows]
    over: set[int] = set()
    for t in traces:
        runs = executes.get((t.device, t.trace_id), [])
        lo = bisect.bisect_right(starts, t.ended.seq)
        hi = bisect.bisect_left(starts, until[id(t)])
        for alloc, free, buffer_id, device, btype, address, size in rows[lo:hi]:
            if buffer_id in over:
                continue
            # TR004 needs the buffer still allocated at a replay of the trace (by its id, as
            # the rule matches execute_trace calls).
            i = bisect.bisect_right(runs, alloc)
            replayed = i < len(runs) and (free is None or runs[i] < free)
            if not replayed and (device, btype, address) not in input_keys:
                continue
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
