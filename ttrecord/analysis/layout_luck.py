"""Layout luck: memory made while a trace is live that landed clear of it, this time.

A buffer allocated after `end_trace_capture` and still allocated at a replay (TR004), or kernel
binaries a compile after capture loads (TR014), lie wherever the allocator found free memory,
and the trace's freed intermediates count as free. When they land clear of every range the
trace uses, the run is safe by placement alone: with more memory in use before them, or
allocations in another order, the same program puts them on the trace's memory and a replay
overwrites them (tt-metal #54032: a decode loop that runs at 32 steps hangs at 1024). ttnn says
the same: it warns at such an allocation, and its trace allocation tracker
(`TT_METAL_TRACE_ALLOC_TRACKING=1`) refuses a replay while one is still allocated.

These are latent (info) findings: nothing was corrupted in this run. One per call path (a loop
allocates at every step), with the count and the first occurrence's ranges.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from ttrecord.analysis.context import Context, TraceInfo
from ttrecord.analysis.facts import callers_key
from ttrecord.analysis.rules import finding, range_evidence, where
from ttrecord.events import BufferRef, Event
from ttrecord.findings import Finding, Severity
from ttrecord.ttnn_versions import UNSAFE_ALLOCATION_WARNING

EVIDENCE_KEY = "layout_luck"
# ttnn 0.81.1: the allocator's warning (first sentence) and the tracker's refusal at execute_trace.
WARNING = max(UNSAFE_ALLOCATION_WARNING.items(), key=lambda kv: tuple(map(int, kv[0].split("."))))[1]
TRACKER = "Found N device buffer(s) still alive before trace replay. These will be corrupted on replay."
_MAX_BINARIES = 4


@dataclass
class Occurrence:
    """One allocation (or compile) that landed clear of the live traces it could have hit."""

    culprit: Event  # the user's call (what the finding is pinned to)
    buffers: list[BufferRef]  # what it placed (empty: a compile with no visible binaries)
    traces: list[tuple[TraceInfo, Event]]  # the live traces and the first replay of each after it
    related: list[int] = field(default_factory=list)


def path_key(ctx: Context, ev: Event) -> tuple:
    """The user's call path of `ev` (its line and every recorded caller above it)."""
    site = ctx.site(ev)
    if site is None:
        return (ev.seq,)
    return (site.file, site.line, site.function, callers_key(site.stack))


def group(ctx: Context, occurrences: Sequence[Occurrence]) -> list[list[Occurrence]]:
    """The occurrences by call path, in order of first occurrence."""
    groups: dict[tuple, list[Occurrence]] = {}
    for occ in occurrences:
        groups.setdefault(path_key(ctx, occ.culprit), []).append(occ)
    return list(groups.values())


def clearance(trace: TraceInfo, buf: BufferRef) -> tuple[str, dict]:
    """Where `buf` lies against the trace's ranges of its buffer type: words and evidence."""
    same_addresses = trace.footprint.overlapping(replace(buf, cores=None)) if buf.cores is not None else []
    if same_addresses:  # sharded: on the trace's addresses, on other cores
        b = same_addresses[0].buffer
        words = (f"trace {trace.trace_id}'s {b.buffer_type} [{b.address:#x}, {b.end:#x}) at the same"
                 f" addresses on device {buf.device}, but on other cores")  # fmt: skip
        return words, {"trace": trace.trace_id, "ranges": len(same_addresses), "span": f"[{b.address:#x}, {b.end:#x})",
                       "nearest_below": None, "nearest_above": None, "other_cores": True}  # fmt: skip
    below, above, (count, lo, hi) = trace.window.nearest(buf.device, buf.buffer_type, buf.address, buf.end)
    near = [f"[{span[0]:#x}, {span[1]:#x}) {side} it" for span, side in ((below, "below"), (above, "above"))
            if span is not None]  # fmt: skip
    memory = f"trace {trace.trace_id}'s {buf.buffer_type} memory on device {buf.device}"
    if count == 1:
        words = f"{memory} ({' and '.join(near)})"
    else:
        words = f"{memory} ({count} ranges within [{lo:#x}, {hi:#x}); nearest {' and '.join(near)})"
    evidence = {"trace": trace.trace_id, "ranges": count, "span": f"[{lo:#x}, {hi:#x})",
                "nearest_below": f"[{below[0]:#x}, {below[1]:#x})" if below else None,
                "nearest_above": f"[{above[0]:#x}, {above[1]:#x})" if above else None}  # fmt: skip
    return words, evidence


def _count_words(n: int) -> str:
    return f" This call path did so {n} times in this run (the ranges are the first one's)." if n > 1 else ""


def allocation_finding(ctx: Context, same_path: list[Occurrence]) -> Finding:
    """TR004 latent: allocations at one call path, clear of the live traces at their replays."""
    first = same_path[0]
    buf = first.buffers[0]
    trace, replay = first.traces[0]
    words, clear = clearance(trace, buf)
    others = [t for t, _ in first.traces[1:]]
    names = ", ".join(f"trace {t.trace_id}" for t, _ in first.traces)
    why = (f"the allocator placed it at {buf.buffer_type} [{buf.address:#x}, {buf.end:#x}), clear of"
           f" {words}, so the replay at {where(ctx, replay)} neither read nor overwrote it")  # fmt: skip
    would = ("with more memory in use before it, or allocations in another order, the allocator can"
             " place it on the trace's freed intermediates, and every replay then overwrites it"
             " (tt-metal #54032: hangs at 1024 steps, runs at 32)")  # fmt: skip
    message = (
        f"`{first.culprit.name}` allocates {buf.buffer_type} [{buf.address:#x}, {buf.end:#x}) on device"
        f" {buf.device} while {names} is live (after its capture at {where(ctx, trace.begin)}), and the"
        f" buffer is still allocated when execute_trace runs at {where(ctx, replay)}. ttnn warns about"
        f" this allocation (\"{WARNING}\") and its trace allocation tracker"
        f" (TT_METAL_TRACE_ALLOC_TRACKING=1) refuses that replay (\"{TRACKER}\")."
        f" Latent in this run: {why}; {would}."
        + (f" It was also live across replays of {', '.join(f'trace {t.trace_id}' for t in others)}."
           if others else "")
        + _count_words(len(same_path))
    )  # fmt: skip
    evidence = {
        "allocated": range_evidence(buf),
        "trace": trace.trace_id,
        "device": buf.device,
        "captured": f"{where(ctx, trace.begin)} to {where(ctx, trace.ended)}",
        "execute": {"event": replay.seq, "at": where(ctx, replay)},
        EVIDENCE_KEY: {"why": why, "would_corrupt": would, "count": len(same_path),
                       "traces": sorted({t.trace_id for o in same_path for t, _ in o.traces}),
                       "clear_of": clear},  # fmt: skip
    }
    fix = (f"Nothing was corrupted in this run. To make it safe by construction: allocate this tensor"
           f" before begin_trace_capture (at {where(ctx, trace.begin)}) and reuse it (copy new data"
           " into it), deallocate it before the next execute_trace, or release the trace first.")  # fmt: skip
    return _pinned(finding("TR004", ctx, first.culprit, message, fix=fix, trace=trace.trace_id,
                           evidence=evidence, severity=Severity.INFO,
                           related=[*first.related, replay.seq]), same_path)  # fmt: skip


def compile_finding(ctx: Context, same_path: list[Occurrence]) -> Finding:
    """TR014 latent: compiles at one call path while a trace was live whose binaries landed clear
    of it (or were not visible), the trace replaying afterwards."""
    first = same_path[0]
    trace, replay = first.traces[0]
    names = ", ".join(f"trace {t.trace_id} (captured at {where(ctx, t.begin)})" for t, _ in first.traces)
    clear: dict | None = None
    if first.buffers:
        shown = first.buffers[:_MAX_BINARIES]
        ranges = ", ".join(f"[{b.address:#x}, {b.end:#x})" for b in shown) + (", ..." if len(first.buffers) > len(shown) else "")
        words, clear = clearance(trace, shown[0])
        why = (f"its {len(first.buffers)} kernel binary buffer(s) landed at {shown[0].buffer_type} {ranges},"
               f" clear of {words}, so the replay at {where(ctx, replay)} did not overwrite them")  # fmt: skip
    else:
        why = ("no kernel binaries were visible in this recording (the 0.81.1 mock device loads none),"
               f" so where they landed is not known; the replay at {where(ctx, replay)} corrupted"
               " nothing this run shows")  # fmt: skip
    would = ("ttnn loads kernel binaries top-down in DRAM wherever the allocator sees free memory, the"
             " trace's freed intermediates included: with DRAM fuller, or compiles and allocations in"
             " another order, they land on the trace's memory and the next replay overwrites them, so"
             " the program runs garbage (tt-metal #54032: hangs at 1024 steps, runs at 32)")  # fmt: skip
    message = (
        f"`{first.culprit.name}` compiled after capture while {names} is live on device"
        f" {first.culprit.device if first.culprit.device is not None else trace.device}: its program"
        " was not in the program cache, and the trace replayed afterwards. ttnn's trace allocation"
        " tracker (TT_METAL_TRACE_ALLOC_TRACKING=1) counts the binaries (`program_cache:`"
        " allocations) against the live trace unless TT_METAL_TRACE_ALLOC_SKIP_PROGRAM_CACHE=1."
        f" Latent in this run: {why}; {would}."
        + _count_words(len(same_path))
    )  # fmt: skip
    evidence: dict = {
        "op": first.culprit.name,
        "traces": sorted({t.trace_id for o in same_path for t, _ in o.traces}),
        "binaries": [range_evidence(b)["range"] for b in first.buffers],
        "replay": replay.seq,
        EVIDENCE_KEY: {"why": why, "would_corrupt": would, "count": len(same_path), "clear_of": clear},
    }
    fix = (f"Nothing was corrupted in this run. Run `{first.culprit.name}` with these shapes and"
           " configs once before the first begin_trace_capture (compile every path first, then"
           " capture), or release the trace before compiling new ops.")  # fmt: skip
    return _pinned(finding("TR014", ctx, first.culprit, message, fix=fix, trace=trace.trace_id,
                           evidence=evidence, severity=Severity.INFO,
                           related=[*first.related, replay.seq]), same_path)  # fmt: skip


def _pinned(f: Finding, same_path: list[Occurrence]) -> Finding:
    """The count as grouping keeps it (`evidence["occurrences"]`)."""
    if len(same_path) > 1:
        last = same_path[-1]
        f.evidence["occurrences"] = {
            "count": len(same_path),
            "first": {"event": same_path[0].culprit.seq, "trace": f.trace},
            "last": {"event": last.culprit.seq, "trace": last.traces[0][0].trace_id},
        }
    return f
