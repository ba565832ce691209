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
from ttrecord.analysis.rules import finding
from ttrecord.events import Event, Kind, Phase
from ttrecord.findings import Finding

_MAX_VALUES = 8  # distinct values listed in the evidence


def _site_key(ev: Event) -> tuple | None:
    site = ev.callsite
    return (site.file, site.line, site.function, ev.name) if site else None


def _arg_name(name: str) -> str:
    return f"positional argument {name}" if name.isdigit() else f"`{name}`"


def _canon(value: Any) -> Any:
    """A hashable key equal for equal values (scalars keyed directly: most args are scalars)."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return (type(value), value)
    return json.dumps(value, sort_keys=True, default=repr)


def detect(events: Sequence[Event], ctx: Context) -> list[Finding]:
    return _captured(events, ctx) + _audited(ctx)


def _captured(events: Sequence[Event], ctx: Context) -> list[Finding]:
    findings: list[Finding] = []
    seen: set = set()
    # Per call site, the distinct values each argument took in eager calls: computed once,
    # since a loop of captures asks about the same site again and again.
    eager_values: dict[tuple, dict[str, dict[Any, Any]]] = {}
    for cap in events:
        if cap.kind is not Kind.OP or cap.phase is not Phase.CAPTURE or cap.parent is not None:
            continue
        key = _site_key(cap)
        if key is None or not cap.args or (key, cap.device, cap.trace) in seen:
            continue  # one finding per call site and trace (a loop inside the capture)
        seen.add((key, cap.device, cap.trace))
        eager = ctx.facts.eager_calls(key)
        if key not in eager_values:
            eager_values[key] = _values([args for args, _, _ in eager])
        varying = _varying_against(eager_values[key], cap.args)
        if varying:
            findings.append(_finding(ctx, cap, eager, varying, region=None))
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
            varying = _varying([c.args for c in calls], calls[0].args)
            if varying:
                others = [(c.args, c.seq, 1) for c in calls[1:]]
                findings.append(_finding(ctx, calls[0], others, varying, region=region))
    return findings


def _values(calls: list[dict[str, Any]]) -> dict[str, dict[Any, Any]]:
    """For each argument name, its distinct values (canonical key -> value) over the calls."""
    out: dict[str, dict[Any, Any]] = {}
    for args in calls:
        for name, value in (args or {}).items():
            out.setdefault(name, {}).setdefault(_canon(value), value)
    return out


def _varying_against(eager: dict[str, dict[Any, Any]], ref: dict[str, Any]) -> dict[str, list[Any]]:
    """Arguments of the captured call `ref` whose value differs across eager calls and it."""
    out: dict[str, list[Any]] = {}
    for name, value in ref.items():
        values = dict(eager.get(name, {}))
        values.setdefault(_canon(value), value)
        if len(values) > 1:
            out[name] = list(values.values())
    return out


def _varying(calls: list[dict[str, Any]], ref: dict[str, Any]) -> dict[str, list[Any]]:
    """Arguments of `ref` whose value is not the same in every call's arguments."""
    out: dict[str, list[Any]] = {}
    for name in ref:
        values: dict[str, Any] = {}
        for args in calls:
            if args and name in args:
                values.setdefault(_canon(args[name]), args[name])
        if len(values) > 1:
            out[name] = list(values.values())
    return out


def _finding(ctx: Context, cap: Event, others: list[tuple[dict, int, int]],
             varying: dict[str, list[Any]], region: str | None) -> Finding:  # fmt: skip
    """`others`: the compared calls as (args, seq, how many calls had exactly these args)."""
    names = ", ".join(_arg_name(n) for n in varying)
    first = next(iter(varying))
    shown = ", ".join(repr(v) for v in varying[first][:_MAX_VALUES])
    if region is None:
        captured = (cap.args or {})[first]
        eager = {_canon(a[first]): a[first] for a, _, _ in others if first in a}
        message = (
            f"`{cap.name}` is captured into trace {cap.trace} with {_arg_name(first)} ="
            f" {captured!r}, while the eager calls at this line passed"
            f" {', '.join(repr(v) for v in list(eager.values())[:_MAX_VALUES])}. The trace"
            f" keeps the captured value: every replay uses {captured!r}, whatever the"
            " program passes later."
        )
    else:
        message = (
            f"`{cap.name}` in audit region {region} is called with {names} taking the values"
            f" {shown} in different calls of the region. A capture of this region would keep"
            " the value of the captured call, and every replay would reuse it."
        )
    evidence: dict[str, Any] = {
        "values": {n: v[:_MAX_VALUES] for n, v in varying.items()},
        "calls_compared": sum(n for _, _, n in others) + 1,
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
    related = [seq for _, seq, _ in others[:_MAX_VALUES]]
    return finding("TR007", ctx, cap, message, fix=fix, related=related, evidence=evidence,
                   trace=cap.trace if region is None else None)  # fmt: skip
