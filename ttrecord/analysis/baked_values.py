"""TR007 value baked into the trace.

Rule: for each op captured into a trace, look at every eager (or prep) call of the same op at
the same user call site. When one of its scalar or shape arguments took more than one value
across those calls and the captured call, the value is reported with everything seen. In an
audit region, the same comparison runs across the region's calls: an argument of one call site
that differs between calls of the audited function would be frozen by a capture.

Why replay breaks: a trace stores the commands with their arguments resolved. A position
index, a sequence length, a scale factor or a shape passed as a Python value is read once at
capture time; every replay uses that value, whatever the Python code would pass now.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from ttrecord.analysis.context import Context
from ttrecord.analysis.rules import finding, where
from ttrecord.events import Event, Kind, Phase
from ttrecord.findings import Finding

_MAX_VALUES = 8  # distinct values listed in the evidence


def _site_key(ev: Event) -> tuple | None:
    site = ev.callsite
    return (site.file, site.line, site.function, ev.name) if site else None


def _canon(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=repr)


def detect(events: Sequence[Event], ctx: Context) -> list[Finding]:
    return _captured(events, ctx) + _audited(ctx)


def _captured(events: Sequence[Event], ctx: Context) -> list[Finding]:
    captured: dict[tuple, list[Event]] = {}
    for ev in events:
        if ev.kind is Kind.OP and ev.phase is Phase.CAPTURE and ev.parent is None and ev.args:
            key = _site_key(ev)
            if key is not None:
                captured.setdefault(key, []).append(ev)
    if not captured:
        return []
    eager: dict[tuple, list[Event]] = {}
    for ev in events:
        if ev.kind is Kind.OP and ev.parent is None and ev.phase in (Phase.EAGER, Phase.PREP):
            key = _site_key(ev)
            if key in captured:
                eager.setdefault(key, []).append(ev)
    findings: list[Finding] = []
    for key, caps in captured.items():
        seen_traces: set = set()
        for cap in caps:
            if (cap.device, cap.trace) in seen_traces:
                continue  # one finding per call site and trace (a loop inside the capture)
            seen_traces.add((cap.device, cap.trace))
            varying = _varying([*eager.get(key, []), cap], cap)
            if varying:
                findings.append(_finding(ctx, cap, eager.get(key, []), varying, region=None))
    return findings


def _audited(ctx: Context) -> list[Finding]:
    by_region: dict[str, dict[tuple, list[Event]]] = {}
    counts: dict[str, int] = {}
    for inst in ctx.regions:
        counts[inst.name] = counts.get(inst.name, 0) + 1
        sites = by_region.setdefault(inst.name, {})
        for ev in inst.events:
            if ev.kind is Kind.OP and ev.args and ev.parent is None:
                key = _site_key(ev)
                if key is not None:
                    sites.setdefault(key, []).append(ev)
    findings: list[Finding] = []
    for region, sites in by_region.items():
        if counts[region] < 2:
            continue
        for calls in sites.values():
            varying = _varying(calls, calls[0])
            if varying:
                findings.append(_finding(ctx, calls[0], calls[1:], varying, region=region))
    return findings


def _varying(calls: list[Event], ref: Event) -> dict[str, list[Any]]:
    """Arguments of `ref` whose value is not the same in every call."""
    out: dict[str, list[Any]] = {}
    for name, value in (ref.args or {}).items():
        values: dict[str, Any] = {}
        for ev in calls:
            args = ev.args or {}
            if name in args:
                values.setdefault(_canon(args[name]), args[name])
        if len(values) > 1:
            out[name] = list(values.values())
    return out


def _finding(ctx: Context, cap: Event, others: list[Event], varying: dict[str, list[Any]],
             region: str | None) -> Finding:  # fmt: skip
    names = ", ".join(f"`{n}`" for n in varying)
    first = next(iter(varying))
    shown = ", ".join(repr(v) for v in varying[first][:_MAX_VALUES])
    if region is None:
        message = (
            f"`{cap.name}` is captured into trace {cap.trace} with {names} ="
            f" {(cap.args or {})[first]!r}, but the eager calls at this line passed"
            f" {shown}. The trace keeps the captured value: every replay uses"
            f" {(cap.args or {})[first]!r}, whatever the program passes later."
        )
    else:
        message = (
            f"`{cap.name}` in audit region {region} is called with {names} taking the values"
            f" {shown} in different calls of the region. A capture of this region would keep"
            " the value of the captured call, and every replay would reuse it."
        )
    evidence: dict[str, Any] = {
        "values": {n: v[:_MAX_VALUES] for n, v in varying.items()},
        "calls_compared": len(others) + 1,
    }
    if region is None:
        evidence["captured"] = {n: (cap.args or {}).get(n) for n in varying}
        evidence["trace"] = cap.trace
    else:
        evidence["region"] = region
    fix = (
        f"Pass {names} as a device tensor that you update before each execute_trace with"
        " ttnn.copy_host_to_device_tensor, or capture one trace per value; keep Python values"
        " that reach captured ops constant across steps."
    )
    related = [e.seq for e in others[:_MAX_VALUES]]
    if region is None and others:
        evidence["eager_calls"] = [where(ctx, others[0]), len(others)]
    return finding("TR007", ctx, cap, message, fix=fix, related=related, evidence=evidence,
                   trace=cap.trace if region is None else None)  # fmt: skip
