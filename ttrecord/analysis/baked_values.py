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
from ttrecord.analysis.facts import callers_key
from ttrecord.analysis.rules import finding
from ttrecord.events import Event, Kind, Phase
from ttrecord.findings import Finding, Severity

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
    """One finding per call path (and varying argument), however many traces captured it.

    Linear in the session: the eager values of a call path are indexed once (distinct value ->
    how many calls, first seq), and each captured call is compared against that index only.
    A loop that captures one trace per step asks about the same path a thousand times.

    A call is its call path (the line and its callers): a model routing every layer through one
    wrapper line calls it once per layer from different callers. When the eager (or prep) run
    made calls along the captured call's own path, only those are compared; a capture reached
    another way (its own block of lines) is compared with every call at its line. When one
    capture calls a path k times (layers in a loop), the j-th of them is compared with the
    eager calls at position j modulo k along that path, when that removes the difference."""
    eager_index: dict[tuple, dict[str, dict[Any, list]]] = {}
    on_path: dict[tuple, bool] = {}  # path -> the eager run made calls along it
    captured: dict[tuple, list[Event]] = {}  # (path, device, trace) -> its calls, in order
    # A capture cut off before end_trace_capture (a call inside it raised) is never replayed:
    # no replay uses what it captured.
    unfinished = {t.key for t in ctx.traces if t.end is None}
    for cap in events:
        if cap.kind is not Kind.OP or cap.phase is not Phase.CAPTURE or cap.parent is not None:
            continue
        if cap.trace is not None and (cap.device, cap.trace) in unfinished:
            continue
        key = _site_key(cap)
        if key is None or not cap.args:
            continue
        stack = callers_key(cap.callsite.stack) if cap.callsite is not None else ()
        path = key
        for d in range(len(stack), 0, -1):  # the longest path the eager run shared with it
            if (*key, stack[:d]) in eager_index or ctx.facts.eager_calls((*key, stack[:d])):
                path = (*key, stack[:d])
                break
        if path not in eager_index:
            eager_index[path] = _index(ctx.facts.eager_calls(path))
            on_path[path] = path != key
        captured.setdefault((path, cap.device, cap.trace), []).append(cap)
    groups: dict[tuple, list[tuple[Event, dict[str, Any]]]] = {}  # (path, arg names) -> captures
    positions: dict[tuple, list[dict[str, dict[Any, list]]]] = {}
    for (path, _device, _trace), caps in captured.items():
        index = eager_index[path]
        k = len(caps)
        for j, cap in enumerate(caps if k > 1 else caps[:1]):
            varying = {n: v for n, v in (cap.args or {}).items() if _differs(index.get(n), v)}
            if varying and k > 1 and on_path[path]:
                by_position = positions.get((path, k))
                if by_position is None:
                    by_position = positions[(path, k)] = _by_position(ctx, path, k)
                if by_position and not any(_differs(by_position[j].get(n), v) for n, v in varying.items()):
                    continue  # the same value as the eager calls in this position
            if varying:
                groups.setdefault((path, tuple(varying)), []).append((cap, varying))
            if k > 1 and not on_path[path]:
                break  # compared with the whole line: one comparison per trace, as before
    return [_captured_finding(ctx, caps, eager_index[path]) for (path, _), caps in groups.items()
            if not _one_trace_per_value(caps, eager_index[path])]  # fmt: skip


def _one_trace_per_value(caps: list[tuple[Event, dict[str, Any]]], index: dict[str, dict[Any, list]]) -> bool:
    """The program keeps one trace per value (a prefill trace per sequence length, a capture
    per step released after its replay): at this call path each trace captured one value of
    its own, each a value the eager run passed. Each trace then replays the value it was
    captured with, as the eager call of its own key did, so no replay computes another result.
    Which trace a replay picks is the program's key, not a value baked into one trace."""
    per_trace: dict[tuple, dict[str, set]] = {}
    for cap, varying in caps:
        values = per_trace.setdefault((cap.device, cap.trace), {})
        for name, value in varying.items():
            if _canon(value) not in index.get(name, {}):
                return False
            values.setdefault(name, set()).add(_canon(value))
    if len(per_trace) < 2:
        return False
    names = {n for values in per_trace.values() for n in values}
    for name in names:
        seen = [values.get(name, set()) for values in per_trace.values()]
        if any(len(v) != 1 for v in seen) or len({next(iter(v)) for v in seen}) != len(seen):
            return False
    return True


def _by_position(ctx: Context, path: tuple, k: int) -> list[dict[str, dict[Any, list]]]:
    """The eager calls along `path` indexed by their position modulo `k`, or [] when their
    count is not a multiple of `k` (then positions mean nothing)."""
    seq = ctx.facts.eager_sequence(path)
    if not seq or len(seq) % k:
        return []
    return [_index([(args, 0, 1) for args in seq[j::k]]) for j in range(k)]


def _index(calls: list[tuple[dict[str, Any], int, int]]) -> dict[str, dict[Any, list]]:
    """Per argument name: canonical value -> [value, calls that passed it, first seq]."""
    out: dict[str, dict[Any, list]] = {}
    for args, first, count in calls:
        for name, value in (args or {}).items():
            entry = out.setdefault(name, {}).get(_canon(value))
            if entry is None:
                out[name][_canon(value)] = [value, count, first]
            else:
                entry[1] += count
                entry[2] = min(entry[2], first)
    return out


def _differs(eager: dict[Any, list] | None, value: Any) -> bool:
    """The eager calls passed some value other than the captured one."""
    if not eager:
        return False
    return len(eager) > 1 or _canon(value) not in eager


def _captured_finding(ctx: Context, caps: list[tuple[Event, dict[str, Any]]],
                      index: dict[str, dict[Any, list]]) -> Finding:  # fmt: skip
    """The finding of one call site: its captures (how many, first and last) and the values."""
    cap, varying = caps[0]
    names = list(varying)
    first = names[0]
    captured: dict[Any, Any] = {}
    for _c, v in caps:
        captured.setdefault(_canon(v[first]), v[first])
    eager = sorted(index[first].values(), key=lambda e: e[2])
    eager_shown = ", ".join(repr(v) for v, _, _ in eager[:_MAX_VALUES])
    more = f" (and {len(eager) - _MAX_VALUES} more)" if len(eager) > _MAX_VALUES else ""
    traces = list(dict.fromkeys(c.trace for c, _ in caps))
    if len(caps) == 1:
        head = f"`{cap.name}` is captured into trace {cap.trace} with {_arg_name(first)} = {varying[first]!r}"
    else:
        shown = ", ".join(repr(v) for v in list(captured.values())[:_MAX_VALUES])
        head = (
            f"`{cap.name}` is captured into {len(traces)} traces (trace {traces[0]} to"
            f" {traces[-1]}) with {_arg_name(first)} = {shown}"
        )
    message = (
        f"{head}, while the {sum(e[1] for e in eager)} eager calls at this line passed"
        f" {eager_shown}{more}. The trace keeps the captured value: every replay uses it,"
        " whatever the program passes later, so a replay meant for another value computes a"
        " different result than the eager call did."
    )
    values: dict[str, list[Any]] = {}
    for n in names:
        merged = {k: e[0] for k, e in sorted(index[n].items(), key=lambda kv: kv[1][2])}
        for _c, v in caps:
            merged.setdefault(_canon(v[n]), v[n])
        values[n] = list(merged.values())[:_MAX_VALUES]
    evidence: dict[str, Any] = {
        "values": values,
        "calls_compared": sum(e[1] for e in eager) + len(caps),
        "captured": {n: (cap.args or {}).get(n) for n in names},
        "trace": cap.trace,
    }
    if len(caps) > 1:
        evidence["occurrences"] = {
            "count": len(caps),
            "first": {"event": caps[0][0].seq, "trace": caps[0][0].trace},
            "last": {"event": caps[-1][0].seq, "trace": caps[-1][0].trace},
        }
    shown_names = ", ".join(_arg_name(n) for n in names)
    fix = (
        f"Pass {shown_names} as a device tensor that you update before each execute_trace with"
        " ttnn.copy_host_to_device_tensor, or capture one trace per value; keep Python values"
        " that reach captured ops constant across steps."
    )
    related = [seq for _, _, seq in eager[:_MAX_VALUES]] + [c.seq for c, _ in caps[1:_MAX_VALUES]]
    # Proven: the recording holds eager calls at this line with another value than the one
    # every replay will use.
    return finding("TR007", ctx, cap, message, fix=fix, related=related, evidence=evidence,
                   trace=cap.trace, severity=Severity.ERROR)  # fmt: skip


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
            varying = _varying([c.args or {} for c in calls], calls[0].args or {})
            if varying:
                others = [(c.args or {}, c.seq, 1) for c in calls[1:]]
                findings.append(_finding(ctx, calls[0], others, varying, region=region))
    return findings


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
             varying: dict[str, list[Any]], region: str) -> Finding:  # fmt: skip
    """An audit region's finding. `others`: the compared calls as (args, seq, count)."""
    names = ", ".join(_arg_name(n) for n in varying)
    first = next(iter(varying))
    shown = ", ".join(repr(v) for v in varying[first][:_MAX_VALUES])
    message = (
        f"`{cap.name}` in audit region {region} is called with {names} taking the values"
        f" {shown} in different calls of the region. A capture of this region would keep"
        " the value of the captured call, and every replay would reuse it."
    )
    evidence: dict[str, Any] = {
        "values": {n: v[:_MAX_VALUES] for n, v in varying.items()},
        "calls_compared": sum(n for _, _, n in others) + 1,
        "region": region,
    }
    fix = (
        f"Pass {names} as a device tensor that you update before each execute_trace with"
        " ttnn.copy_host_to_device_tensor, or capture one trace per value; keep Python values"
        " that reach captured ops constant across steps."
    )
    related = [seq for _, seq, _ in others[:_MAX_VALUES]]
    return finding("TR007", ctx, cap, message, fix=fix, related=related, evidence=evidence)
