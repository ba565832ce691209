"""TR004's "held by" sentence: the Python references the recorder found holding a hazardous
post-capture buffer at a replay (`referrers` notes, `ttrecord.recorder.referrers`), as ttnn's
tracker names them with `TT_METAL_TRACE_ALLOC_TRACKING_TRACEBACKS=1`.

The allocating line says where the buffer came from; the holder says what to `del` or
`ttnn.deallocate` before the replay, which is often elsewhere (a cache, an attribute)."""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from typing import Any

from ttrecord.analysis.context import Context, TraceInfo
from ttrecord.analysis.rules import where
from ttrecord.events import REFERRERS, Event, Kind
from ttrecord.findings import Finding
from ttrecord.store.referrer_rows import describe, parse_note


def notes_by_execute(events: Sequence[Event]) -> dict[int, Any]:
    """execute_trace seq -> its `referrers` note's args (few: only replays that found a
    post-capture buffer alive have one)."""
    return {ev.parent: ev.args for ev in events
            if ev.kind is Kind.NOTE and ev.name == REFERRERS and ev.parent is not None}  # fmt: skip


def add_holders(ctx: Context, f: Finding, notes: dict[int, Any], trace: TraceInfo, alloc: Event,
                end: int | None) -> None:  # fmt: skip
    """Name in `f` the references that held `alloc`'s buffer at the first replay of `trace`
    while it was allocated that has a note for it (evidence `held_by`, `held_at`)."""
    if not notes or alloc.buffer is None:
        return
    key = (alloc.buffer.buffer_type, alloc.buffer.address)
    seqs = trace.window.executes
    for i in range(bisect.bisect_right(seqs, alloc.seq), len(seqs)):
        seq = seqs[i]
        if end is not None and seq >= end:
            return
        holders = parse_note(notes.get(seq)).get(key) if seq in notes else None
        if holders:
            said = [describe(h) for h in holders]
            execute = next((e for e in trace.executes if e.seq == seq), None)
            at = where(ctx, execute) if execute is not None else f"event {seq}"
            f.evidence["held_by"] = said
            f.evidence["held_at"] = at
            f.message += f" At the replay at {at} it was held by {_join(said)}."
            return


def _join(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]
