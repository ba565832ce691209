"""TR013 compile inside capture (incomplete warm-up).

ttnn compiles an op's program the first time it sees the op's program-cache key (the op and
its inputs' and output's shapes, dtypes, layouts, memory and program configs). Compiling loads
kernel binaries into DRAM, which a capture cannot record: ttnn 0.81.1 aborts with "Cannot load
new binaries during trace capture." (mesh_workload.cpp:200; the cache entry is inserted before,
so the count still grows). The warm-up (prep) run exists to compile every program the capture
will run; when the capture runs a call with a key the warm-up never used, the warm-up was
incomplete.

The recorder asks the device for `num_program_cache_entries()` after each op while a trace is
being captured or live and records a `program_cache_miss` note under a call that made it grow.
A clear of the program cache (`device.disable_and_clear_program_cache()`) is recorded as a
`program_cache_clear` note; one between the warm-up call and the capture is named as the cause.
Rule: per capture, the first captured call that compiled is reported (one warm-up mistake
usually makes several ops compile; the rest are listed in the message), naming the op, the key
fields that differ from the warm-up call at the same line (else the prep run's last call of the
op, for a warm-up written at other lines: see `store/prep.py`), or saying there was none.
"""

from __future__ import annotations

from collections.abc import Sequence

from ttrecord.analysis.context import Context
from ttrecord.analysis.rules import finding, where
from ttrecord.events import Event, Kind, NoteKind, Phase, Status, TensorRef
from ttrecord.findings import Finding

_FIELDS = ("shape", "dtype", "layout", "memory_config")


def detect(events: Sequence[Event], ctx: Context) -> list[Finding]:
    by_trace: dict[tuple, list[Event]] = {}
    for ev in events:
        if ev.kind is Kind.NOTE and ev.name == NoteKind.PROGRAM_CACHE_MISS and ev.phase is Phase.CAPTURE:
            call = ctx.calls.get(ev.parent) if ev.parent is not None else None
            if call is not None:
                by_trace.setdefault((ev.device, ev.trace), []).append(ctx.outermost(call))
    findings = []
    for (_device, trace), calls in by_trace.items():
        calls = list({c.seq: c for c in calls}.values())
        findings.append(_compiled(ctx, calls, trace))
    return findings


def _compiled(ctx: Context, calls: list[Event], trace: int | None) -> Finding:
    first = calls[0]
    info = next((t for t in ctx.traces if t.trace_id == trace and t.device == first.device
                 and t.begin.seq < first.seq), None)  # fmt: skip
    begin = info.begin.seq if info is not None else first.seq
    site = ctx.site(first)
    warm = None
    if site is not None:
        warm = ctx.facts.last_call_at((site.file, site.line, site.function, first.name), begin)
    if warm is None:  # a warm-up written as a copy of the captured block: its prep run's call
        after = max((t.end.seq for t in ctx.traces if t.device == first.device and t.end is not None
                     and t.end.seq < begin), default=0)  # fmt: skip
        warm = ctx.facts.last_prep_call(first.name, first.device, after, begin)
    evidence: dict = {"op": first.name, "trace": trace}
    if warm is None:
        why = (f"No call of {first.name} at this line (nor in the prep run) ran before the"
               " capture, so the warm-up never compiled it.")  # fmt: skip
    else:
        diffs = _key_diff(warm.inputs, first.inputs)
        evidence["warm_up"] = where(ctx, warm)
        if diffs:
            evidence["differs"] = diffs
            why = (f"The warm-up call at {where(ctx, warm)} compiled it with a different key: "
                   + "; ".join(diffs) + ".")  # fmt: skip
        elif (clear := _cleared_between(ctx, first.device, warm.seq, begin)) is not None:
            method = (clear.args or {}).get("method", "disable_and_clear_program_cache")
            evidence["cache_cleared"] = where(ctx, clear)
            why = (f"The warm-up call at {where(ctx, warm)} compiled the same key, but the program"
                   f" cache was cleared at {where(ctx, clear)} (`{method}`) between the warm-up"
                   " and the capture, so the capture compiled it again.")  # fmt: skip
        else:
            why = (f"The warm-up call at {where(ctx, warm)} had the same shapes, dtypes, layouts"
                   " and memory configs: the program cache was emptied since (e.g."
                   " disable_and_clear_program_cache, a mesh reshape) or the key depends on"
                   " something else (a program config, free L1).")  # fmt: skip
    others = ""
    if len(calls) > 1:
        rest = [f"{c.name} at {where(ctx, c)}" for c in calls[1:4]]
        more = f" and {len(calls) - 4} more" if len(calls) > 4 else ""
        others = f" Also compiled in this capture: {', '.join(rest)}{more}."
        evidence["also_compiled"] = len(calls) - 1
    aborted = " and ttnn aborted the call" if first.status is Status.RAISED else ""
    message = (
        f"`{first.name}` compiled inside the capture of trace {trace} (the device's program cache"
        f" grew during the call{aborted}). {why} Compiling loads kernel binaries into DRAM, which"
        " ttnn refuses during capture (0.81.1: \"Cannot load new binaries during trace capture."
        f" This program is not yet in program cache.\").{others}"
    )
    fix = ("Run the exact captured sequence once before begin_trace_capture (same shapes, dtypes,"
           " layouts and memory configs), and do not clear the program cache between the warm-up"
           " and the capture.")  # fmt: skip
    related = [warm.seq] if warm is not None else []
    return finding("TR013", ctx, first, message, fix=fix, related=related + [c.seq for c in calls[1:]],
                   evidence=evidence, trace=trace)  # fmt: skip


def _cleared_between(ctx: Context, device: int | None, after: int, before: int) -> Event | None:
    """The last program-cache clear the recorder noted on `device` between two calls."""
    found = None
    for ev in ctx.events:
        if ev.seq >= before:
            break
        if (ev.seq > after and ev.kind is Kind.NOTE and ev.name == NoteKind.PROGRAM_CACHE_CLEAR
                and (ev.args or {}).get("device") in (device, None)):  # fmt: skip
            found = ev
    return found


def _key_diff(warm: Sequence[TensorRef], captured: Sequence[TensorRef]) -> list[str]:
    """Key fields of the captured call's tensors that differ from the warm-up call's."""
    if len(warm) != len(captured):
        return [f"{len(captured)} tensor inputs instead of {len(warm)}"]
    out = []
    for i, (w, c) in enumerate(zip(warm, captured)):
        for name in _FIELDS:
            a, b = getattr(w, name), getattr(c, name)
            if a != b:
                shown = (lambda v: list(v)) if name == "shape" else (lambda v: v)
                out.append(f"input {i} {name} {shown(b)} (warm-up: {shown(a)})")
    return out
