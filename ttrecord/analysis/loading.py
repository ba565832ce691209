"""Loads the part of a session the detectors need, so `check` stays fast on long runs.

A long run is mostly eager ops, allocations and frees that no hazard rule can involve. The
detectors scan every event of a few kinds (trace calls, syncs, anything inside a capture or an
audit region) and, of the rest, only:
- allocations made while a trace is live that are still allocated at a replay of it, on a
  device and buffer type it uses (TR004: over its memory, or clear of it by layout luck), with
  their frees and the call that produced the buffer (in a decode loop nearly every eager
  allocation is freed before the next replay);
- frees of a trace's inputs, and host-to-device calls that made a new device tensor (TR005);
- the callers of all of these, for the user's line.
Everything else they need about the run (was a buffer already allocated before a capture,
which arguments the eager calls at a call site passed, when a trace's outputs were read and its
inputs written) comes from `SessionFacts`' set-based queries. Each question is a few indexed
queries for the whole session, not one per trace.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ttrecord.analysis.context import Context, TraceInfo, buffer_key
from ttrecord.analysis.facts import SessionFacts
from ttrecord.events import Event, Kind, Phase
from ttrecord.store.queries import CORE_PARTS

if TYPE_CHECKING:
    from ttrecord.store.reader import Session


def wanted() -> set[str]:
    """The facts the registered rules declare."""
    from ttrecord.analysis.registry import rules

    names = {name for rule in rules().values() for name in rule.facts}
    unknown = names - CORE_PARTS.keys() - LOADERS.keys()
    if unknown:
        raise KeyError(f"rules declare facts no loader provides: {', '.join(sorted(unknown))}")
    return names


def load(session: Session) -> tuple[list[Event], SessionFacts, list[TraceInfo]]:
    """The events the detectors scan (in seq order), the facts for the rest, and the traces.

    Every capture-phase event and trace call is in the first batch, so the traces derived from
    it are those of the whole run."""
    names = wanted()
    events, facts = load_core(session, names)
    core = [e.seq for e in events]
    all_traces = Context(events, facts=facts).traces
    traces = [t for t in all_traces if t.end is not None]
    have = set(core)
    extra: set[int] = set()
    for name in sorted(names & LOADERS.keys()):
        extra |= LOADERS[name](session, facts, traces, events)
    extra -= have
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


def load_core(session: Session, names: set[str] | None = None) -> tuple[list[Event], SessionFacts]:
    """Trace calls, everything inside a capture or audit region and every other call that is
    not an op or transfer (and the `CORE_PARTS` named), with the facts for the rest: what the
    traces are derived from (and all a report needs besides the findings)."""
    facts = SessionFacts(session)
    names = wanted() if names is None else names
    events = session.core_events(names & CORE_PARTS.keys())
    facts.prefetch(
        buffer_key(r.buffer) for e in events if e.phase is Phase.CAPTURE
        for r in e.outputs if r.buffer is not None
    )  # fmt: skip
    return events, facts


def _frees(session: Session, events: list[Event]) -> set[int]:
    """Where the buffers of the loaded allocations ended: without it, an allocation loaded for
    another reason (an audit region) would look live at a replay it never saw."""
    allocs = [e.seq for e in events if e.kind is Kind.ALLOC and e.phase is not Phase.CAPTURE]
    return session.free_seqs_of(allocs)


def _until(session: Session, traces: list[TraceInfo]) -> dict[int, int]:
    """Each trace's release, or past the end of the run."""
    last = session.last_seq()
    return {id(t): t.release.seq if t.release else last + 1 for t in traces}


def _windows(traces: list[TraceInfo], until: dict[int, int]) -> list[list[int]]:
    """The merged (capture end, last replay or release) windows of the traces."""
    windows = []
    for t in traces:
        w = t.window
        if w.executes and w.executes[-1] > w.end:
            windows.append((w.end, min(until[id(t)], w.executes[-1])))
    merged: list[list[int]] = []
    for lo, hi in sorted(windows):
        if merged and lo <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], hi)
        else:
            merged.append([lo, hi])
    return merged


def allocations_over_traces(session: Session, facts: SessionFacts, traces: list[TraceInfo],
                            core: list[Event]) -> set[int]:  # fmt: skip
    """TR004: the buffers allocated while a trace can be replayed that are still allocated at a
    replay (`trace_overlap`: over its memory, or clear of it by layout luck), with their frees
    and the calls that made them. By allocation
    time, not address: in a decode loop every eager step reuses the addresses the trace
    touches, but frees them before the next replay."""
    if not traces:
        return set()
    rows = session.buffers_allocated_within(_windows(traces, _until(session, traces)))
    rows.sort(key=lambda r: (r.alloc_seq, r.id))
    over: set[int] = set()
    for t in traces:
        window = t.window
        for alloc, free, buffer_id, device, btype, _address, _size in rows[window.suspects(rows)]:
            if buffer_id not in over and window.replay_alive(device, btype, alloc, free):
                over.add(buffer_id)  # on its memory, or clear of it by layout luck
    return _buffer_events(session, over)


def trace_input_lifetimes(session: Session, facts: SessionFacts, traces: list[TraceInfo],
                          core: list[Event]) -> set[int]:  # fmt: skip
    """TR005: the frees of trace inputs, the buffers later allocated at an input's address
    while the trace lives (even when freed before any replay), and host-to-device calls that
    made a new device tensor instead of writing into an input."""
    if not traces:
        return set()
    until = _until(session, traces)
    input_keys = {buffer_key(acc.buffer) for t in traces for acc in t.inputs()}
    facts.prefetch(input_keys)  # one query, not one per trace input below
    seqs: set[int] = set()
    at_inputs: set[int] = set()
    input_buffers: set[int] = set()
    for t in traces:
        for acc in t.inputs():
            for alloc, free, buffer_id in facts.lifetimes(buffer_key(acc.buffer)):
                if alloc <= acc.seq and (free is None or free > acc.seq):
                    if free is not None:
                        seqs.add(free)
                    input_buffers.add(buffer_id)
                elif t.window.end < alloc < until[id(t)] or (
                    buffer_key(acc.buffer) in t.refilled and acc.seq < alloc < t.window.end
                ):  # after the capture, or the capture's own holder of the input
                    at_inputs.add(buffer_id)
    seqs.update(session.new_device_tensors(input_buffers))
    return seqs | _buffer_events(session, at_inputs)


def _buffer_events(session: Session, ids: set[int]) -> set[int]:
    """The allocation and free events of these buffers, and the calls that output them."""
    if not ids:
        return set()
    return set(session.buffer_event_seqs(ids)) | set(session.first_writers(ids))


def queue_accesses(session: Session, facts: SessionFacts, traces: list[TraceInfo],
                   core: list[Event]) -> set[int]:  # fmt: skip
    """TR012: in a program that uses a second command queue or non-blocking reads, the host
    transfers and the eager ops over memory another queue touches (none otherwise)."""
    from ttrecord.analysis.queue_races import needed_seqs

    return needed_seqs(session, core, traces)


LOADERS = {
    "queue_accesses": queue_accesses,
    "allocations_over_traces": allocations_over_traces,
    "trace_input_lifetimes": trace_input_lifetimes,
}
