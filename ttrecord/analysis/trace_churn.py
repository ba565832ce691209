"""Performance hazards of a run's captures: a trace captured and never replayed, and a call path
that captures again and again.

A capture costs a prep run, the capture itself and trace-region memory; it pays off only over
replays. tt-metal #57270 captured a decode trace during prefill warm-up and never executed it;
PR #51665 released and recaptured every trace on each request-type flip and decode throughput
collapsed. Both are info: nothing is corrupted, the program is slower or holds memory for
nothing.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from typing import Any

from ttrecord.analysis.context import Context, TraceInfo
from ttrecord.analysis.rules import finding, where
from ttrecord.events import Event, Kind, Phase
from ttrecord.findings import Finding

# A call path that captures more often than this is reported even when no capture repeats a
# released one (each is a prep run and a capture the program pays again).
MAX_CAPTURES_PER_PATH = 8


def detect_unreplayed(events: Sequence[Event], ctx: Context) -> list[Finding]:
    """TR017: a trace whose capture ended and that was released without one `execute_trace`,
    on a device where the program replays other traces (one never released is TR009's)."""
    findings = []
    replaying = {t.device for t in ctx.traces if t.executes}
    for t in ctx.traces:
        if (t.end is None or t.end_raised is not None or t.raised_inside or t.executes
                or t.release is None or t.device not in replaying):  # fmt: skip
            continue  # (a program that replays no trace at all is a test of captures)
        fate = f"released at {where(ctx, t.release)}"
        findings.append(finding(
            "TR017", ctx, t.begin,
            f"Trace {t.trace_id} on device {t.device} was captured ({t.ops} ops, ended at"
            f" {where(ctx, t.end)}) and {fate} without being replayed once: its prep run, the"
            " capture and its trace-region memory bought nothing.",
            fix=("Capture a trace only on the path that replays it (e.g. not a decode trace during"
                 " a prefill-only warm-up), or replay it."),  # fmt: skip
            related=[t.end.seq] + ([t.release.seq] if t.release is not None else []),
            evidence={"trace": t.trace_id, "device": t.device, "ops": t.ops,
                      "ended_at": where(ctx, t.end),
                      "released_at": where(ctx, t.release) if t.release is not None else None},
            trace=t.trace_id,
        ))  # fmt: skip
    return findings


def detect_recapture(events: Sequence[Event], ctx: Context) -> list[Finding]:
    """TR018: one call path (the `begin_trace_capture` line and its callers) captured more than
    `MAX_CAPTURES_PER_PATH` times, or captured again the op sequence of a trace it released."""
    done = [t for t in ctx.traces if t.end is not None and t.end_raised is None]
    if len(done) < 2:
        return []
    sequences = _captured_ops(events, done)
    by_path: dict[Any, list[TraceInfo]] = {}
    for t in done:
        site = ctx.site(t.begin)
        if site is None:
            continue
        key = (site.file, site.line, tuple((f[0], f[1]) for f in site.stack))
        by_path.setdefault(key, []).append(t)
    findings = []
    for traces in by_path.values():
        if len(traces) < 2:
            continue
        recaptures = [b for a, b in zip(traces, traces[1:])
                      if a.release is not None and a.release.seq < b.begin.seq
                      and sequences[id(a)] == sequences[id(b)]]  # fmt: skip
        if not recaptures and len(traces) <= MAX_CAPTURES_PER_PATH:
            continue
        first = traces[0]
        releases = [t.release for t in traces if t.release is not None]
        release_lines = sorted({where(ctx, r) for r in releases})
        what = (f"released and captured the same {len(sequences[id(first)])} ops again"
                f" {len(recaptures)} time{'s' if len(recaptures) != 1 else ''}"
                if recaptures else "kept capturing")  # fmt: skip
        findings.append(finding(
            "TR018", ctx, first.begin,
            f"This call path captured {len(traces)} traces on device {first.device} and {what}"
            f" (releases at {', '.join(release_lines) or 'none'}). Every capture repeats a prep"
            " run and a capture the replays were meant to save: throughput collapses when it"
            " happens per request.",
            fix=("Capture each variant once and keep its trace live (one trace per request type or"
                 " shape), selecting among them at replay time instead of releasing and"
                 " recapturing."),  # fmt: skip
            related=[t.begin.seq for t in traces[1:]] + [r.seq for r in releases],
            evidence={"captures": len(traces), "recaptures_after_release": len(recaptures),
                      "ops_per_capture": len(sequences[id(first)]),
                      "captured_at": [where(ctx, t.begin) for t in traces],
                      "released_at": release_lines},
            trace=first.trace_id,
        ))  # fmt: skip
    return findings


def _captured_ops(events: Sequence[Event], traces: list[TraceInfo]) -> dict[int, tuple[str, ...]]:
    """The names of each trace's top-level captured calls, in order (by id of its TraceInfo)."""
    spans = sorted((t.begin.seq, t.end.seq if t.end is not None else t.begin.seq, t) for t in traces)
    starts = [s[0] for s in spans]
    ops: dict[int, list[str]] = {id(t): [] for t in traces}
    for ev in events:
        if ev.phase is not Phase.CAPTURE or ev.parent is not None or ev.kind is not Kind.OP:
            continue
        i = bisect_right(starts, ev.seq) - 1
        while i >= 0:
            begin, end, t = spans[i]
            if begin < ev.seq < end and t.device == ev.device:
                ops[id(t)].append(ev.name)
                break
            i -= 1
            if i >= 0 and spans[i][1] < ev.seq:
                break
    return {k: tuple(v) for k, v in ops.items()}
