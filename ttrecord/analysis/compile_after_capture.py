"""TR014 compile after capture while the trace is live.

A program compiled for the first time after `end_trace_capture`, while the trace is still live,
gets its kernel binaries allocated in DRAM (tt-metal 0.81.1: `MeshWorkloadImpl::load_binaries`,
a replicated buffer with 2048-byte pages, top-down) in memory the allocator believes free,
possibly memory the trace writes on every replay. The next replay then overwrites the binaries
and the program runs garbage (a hang, or wrong values): vLLM on Tenstorrent compiled decode
between prefill captures; tt-metal's model tests had the same ordering bug. The fix is in the
warm-up order: compile every path before the first capture.

The recorder notes a `program_cache_miss` under a call that grew the device's program cache
while a trace was live (see TR013 for misses inside a capture), and the buffers that call left
allocated that are none of its outputs (the kernel binaries, as the allocator shows them).
Rule, one finding per call site naming the op and the live trace(s):
- error when a binary overlaps a range a live trace reads, writes or creates and is still
  allocated at a replay of that trace (the replay overwrites it); TR004 leaves such a buffer to
  this rule, so the mistake gets one finding with the compile's fix;
- a warning when a binary overlaps such a range but no replay of that trace ran over it.
- info (latent, `layout_luck`) when the binaries landed clear of every live trace's memory, or
  are not visible (the 0.81.1 mock device loads none), and a live trace replayed while they were
  allocated: safe by placement only, since top-down binaries land wherever DRAM is free, the
  trace's freed intermediates included. One per call path, with the count.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence

from ttrecord.analysis import layout_luck
from ttrecord.analysis.context import Context, TraceInfo, buffer_key
from ttrecord.analysis.rules import finding, range_evidence, where
from ttrecord.events import BufferRef, Event, Kind, NoteKind, Phase, Status
from ttrecord.findings import Finding, Severity


def detect(events: Sequence[Event], ctx: Context) -> list[Finding]:
    findings: list[Finding] = []
    reported: set = set()
    misses: dict[int, Event] = {}  # compiling call seq -> its note
    binaries: dict[int, list[Event]] = {}  # call seq -> the ALLOC events under it
    freed: dict[tuple, list[int]] = {}  # buffer key -> seqs of its frees
    replays: dict[tuple, list[int]] = {}  # (device, trace) -> execute seqs
    for ev in events:
        kind = ev.kind
        if kind is Kind.NOTE and ev.name == NoteKind.PROGRAM_CACHE_MISS and ev.parent is not None:
            if ev.phase is not Phase.CAPTURE:  # inside a capture: TR013
                misses[ev.parent] = ev
        elif (kind is Kind.ALLOC and ev.parent is not None and ev.buffer is not None
              and ev.phase is not Phase.CAPTURE and not (ev.args or {}).get("temporary")):  # fmt: skip
            binaries.setdefault(ev.parent, []).append(ev)  # the note follows its allocations
        elif kind is Kind.FREE and ev.buffer is not None:
            freed.setdefault(buffer_key(ev.buffer), []).append(ev.seq)
        elif kind is Kind.TRACE_EXECUTE and ev.status is not Status.RAISED:
            replays.setdefault((ev.device, ev.trace), []).append(ev.seq)
    clear: list[layout_luck.Occurrence] = []
    for seq, note in misses.items():
        call = ctx.calls.get(seq)
        live = [t for t in ctx.traces if t.device == note.device and t.live_at(note.seq)]
        if call is None or not live:
            continue
        allocs = kernel_binaries(call, binaries.get(seq, ()))
        over = [(a, t) for a in allocs for t in live if a.buffer and t.footprint.hits(a.buffer)]
        if not over:  # clear of every live trace's memory, or not visible: latent
            occ = _clear_of_traces(ctx, call, allocs, live, freed, replays)
            if occ is not None:
                clear.append(occ)
            continue
        hit = next(((a, t, r) for a, t in over
                    for r in [_replay_over(a, t, freed, replays)] if r is not None), None)  # fmt: skip
        call = ctx.outermost(call)
        site = ctx.site(call)
        key = (site.file, site.line) if site else call.seq
        if key in reported:
            continue
        reported.add(key)
        findings.append(_finding(ctx, call, note, live, [a.buffer for a in allocs if a.buffer], hit))
    return findings + [layout_luck.compile_finding(ctx, same) for same in layout_luck.group(ctx, clear)]


def _clear_of_traces(ctx: Context, call: Event, allocs: list[Event], live: list[TraceInfo],
                     freed: dict, replays: dict) -> layout_luck.Occurrence | None:  # fmt: skip
    """The compile as layout luck: the live traces that replayed while its binaries were
    allocated (after the compile, when none are visible), with the first such replay each."""
    replayed = []
    for t in live:
        runs = replays.get((t.device, t.trace_id), [])
        if allocs:
            first = [r for a in allocs for r in [_replay_over(a, t, freed, replays)] if r is not None]
        else:
            i = bisect.bisect_right(runs, call.seq)
            first = runs[i:i + 1]
        if first and (t.release is None or min(first) < t.release.seq):
            execute = ctx.calls.get(min(first))
            if execute is not None:
                replayed.append((t, execute))
    if not replayed:
        return None
    bins = [a.buffer for a in allocs if a.buffer is not None]
    return layout_luck.Occurrence(ctx.outermost(call), bins, replayed, [call.seq])


def kernel_binaries(call: Event, allocs: Sequence[Event]) -> list[Event]:
    """The allocations a compiling call left that are none of its outputs."""
    outputs = {buffer_key(t.buffer) for t in call.outputs if t.buffer}
    return [a for a in allocs if a.buffer is not None and buffer_key(a.buffer) not in outputs]


def _replay_over(alloc: Event, trace: TraceInfo, freed: dict, replays: dict) -> int | None:
    """The first replay of `trace` after the binary was allocated, if it was still allocated."""
    assert alloc.buffer is not None
    runs = replays.get((trace.device, trace.trace_id), [])
    i = bisect.bisect_right(runs, alloc.seq)
    if i == len(runs):
        return None
    frees = freed.get(buffer_key(alloc.buffer), [])
    j = bisect.bisect_right(frees, alloc.seq)
    return runs[i] if j == len(frees) or frees[j] > runs[i] else None


def _finding(ctx: Context, call: Event, note: Event, live: list[TraceInfo], bins: list[BufferRef],
             hit: tuple | None) -> Finding:  # fmt: skip
    traces = ", ".join(f"trace {t.trace_id} (captured at {where(ctx, t.begin)})" for t in live)
    message = (
        f"`{call.name}` compiled after capture while {traces} is live on device {note.device}:"
        f" its program was not in the program cache, and the call left {len(bins)} buffer(s)"
        " that are none of its outputs (kernel binaries)"
    )
    evidence: dict = {"op": call.name, "traces": [t.trace_id for t in live],
                      "binaries": [range_evidence(b)["range"] for b in bins]}  # fmt: skip
    severity, trace, related = Severity.WARNING, live[0].trace_id, [t.begin.seq for t in live]
    if hit is None:
        message += (", allocated on memory a live trace uses (its freed intermediates count as"
                    " free): the next replay of that trace overwrites them.")  # fmt: skip
    else:
        alloc, t, replay = hit
        b = alloc.buffer
        uses = sorted({a.role for a in t.footprint.overlapping(b)})
        message += (f"; {b.buffer_type} [{b.address:#x}, {b.end:#x}) lies on memory trace"
                    f" {t.trace_id} {' and '.join(_ROLE[r] for r in uses)}, and the replay at"
                    f" {where(ctx, ctx.calls.get(replay) or alloc)} ran over it: the program's"
                    " binaries are overwritten, so its next run (eager or inside another trace)"
                    " executes garbage: wrong values or a hang.")  # fmt: skip
        evidence["overlaps_trace"] = t.trace_id
        evidence["replay"] = replay
        severity, trace, related = Severity.ERROR, t.trace_id, related + [replay]
    fix = (f"Run `{call.name}` with these shapes and configs once before the first"
           " begin_trace_capture (compile every path first, then capture), or release the trace"
           " before compiling new ops.")  # fmt: skip
    return finding("TR014", ctx, call, message, fix=fix, severity=severity, related=related,
                   evidence=evidence, trace=trace)  # fmt: skip


_ROLE = {"read": "reads", "write": "writes", "new": "creates"}
