"""TR001 readback, TR002 host write, TR003 sync and TR008 host work inside a capture region.

Rule: a call made while a trace is being captured on its device (phase `capture`), or inside an
audit region (each call of an audited function is a would-be capture), is reported when it is
- TR001: a device-to-host read of any kind (`to_torch`, `Tensor.cpu`, `item`, ...);
- TR002: a host-to-device write of any kind (`from_torch(..., device=)`,
  `copy_host_to_device_tensor`, `Tensor.to(device)`, ...);
- TR003: a device or event synchronization;
- TR008: an op whose tensors are all host tensors, i.e. work that runs on the host.
One finding per user call site and capture (or audited function); nested calls inside one user
call count once, at the user's line. A call that raised (real ttnn aborts a read inside capture
with a TT_FATAL) is still reported at that line.

Why replay breaks: a trace records device commands only. Transfers and syncs are host-driven,
so real ttnn refuses them during capture; host work is not recorded at all, so replay silently
skips it and uses whatever the capture-time host computation produced.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ttrecord.analysis.context import Context
from ttrecord.analysis.rules import finding, short_file
from ttrecord.events import Event, Kind, Phase, Status
from ttrecord.findings import Finding

RULE_FOR_KIND = {Kind.D2H: "TR001", Kind.H2D: "TR002", Kind.SYNC: "TR003"}


def classify(ev: Event) -> str | None:
    """The rule a call breaks when it runs inside a capture region, if any."""
    rule = RULE_FOR_KIND.get(ev.kind)
    if rule is not None:
        return rule
    if ev.kind is Kind.OP:
        tensors = ev.inputs + ev.outputs
        if tensors and all(t.storage != "device" for t in tensors):
            return "TR008"
    return None


def detect(events: Sequence[Event], ctx: Context, rule: str) -> list[Finding]:
    """The findings of one rule (TR001, TR002, TR003 or TR008): its catalog module's detector."""
    findings = _scan(ctx, [e for e in events if e.phase is Phase.CAPTURE], None, rule)
    seen = {(f.rule, f.file, f.line) for f in findings}
    for name, instances in _group_regions(ctx).items():
        for f in _scan(ctx, [e for inst in instances for e in inst.events], name, rule):
            if (f.rule, f.file, f.line) not in seen:  # a real capture already showed it
                findings.append(f)
    return findings


def _group_regions(ctx: Context) -> dict[str, list]:
    groups: dict[str, list] = {}
    for inst in ctx.regions:
        groups.setdefault(inst.name, []).append(inst)
    return groups


def _scan(ctx: Context, events: Iterable[Event], region: str | None, only: str) -> list[Finding]:
    """Group hazardous calls by (rule, scope, user line): one finding each, culprit first."""
    groups: dict[tuple, list[tuple[Event, Event]]] = {}
    counted: set[tuple[str, int]] = set()
    for ev in events:
        rule = classify(ev)
        if rule != only:
            continue
        top = ctx.outermost(ev)
        if (rule, top.seq) in counted:
            continue
        counted.add((rule, top.seq))
        site = ctx.site(ev)
        scope = region if region is not None else (ev.device, ev.trace)
        where_key = (site.file, site.line) if site else ("", top.seq)
        groups.setdefault((rule, scope, where_key), []).append((top, ev))
    return [_finding(ctx, rule, calls, region) for (rule, _, _), calls in groups.items()]


_WHAT = {
    "TR001": "reads device memory back to the host",
    "TR002": "writes host data to the device",
    "TR003": "waits for the device",
    "TR008": "runs on the host (all its tensors are host tensors)",
}
_WHY = {
    "TR001": "A trace replays device commands only: the read happens once at capture time and"
    " never on replay, and real ttnn aborts it ('Reads are not supported during trace"
    " capture.').",
    "TR002": "A trace replays device commands only, so the data would be written once at capture"
    " time and never again, and real ttnn aborts it ('Writes are not supported during trace"
    " capture.').",
    "TR003": "Synchronization is host-driven and cannot be recorded; real ttnn aborts it ('Event"
    " Synchronization is not supported during trace capture.').",
    "TR008": "Host work is not recorded in the trace: replay skips it and keeps the result"
    " computed at capture time.",
}
_FIX = {
    "TR001": "Move the read after ttnn.execute_trace (read the captured output tensor once the"
    " replay is done), outside begin_trace_capture/end_trace_capture.",
    "TR002": "Create the device tensor before capture and, before each ttnn.execute_trace, copy"
    " new data into it with ttnn.copy_host_to_device_tensor(host_tensor, captured_tensor).",
    "TR003": "Call ttnn.synchronize_device before begin_trace_capture or after execute_trace.",
    "TR008": "Do the host-side work before capture (or after execute_trace) and feed its result"
    " in through a pre-allocated device tensor; inside the region use device ops only.",
}


def _finding(ctx: Context, rule: str, calls: list[tuple[Event, Event]], region: str | None) -> Finding:
    top, ev = calls[0]
    name = top.name if top.kind is not Kind.OP or rule == "TR008" else ev.name
    if region is not None:
        scope = f"in audit region {region}"
        if len(calls) > 1:
            scope += f" ({len(calls)} times)"
        why = _WHY[rule].replace("at capture time", "at capture time if this region were captured")
        message = f"`{name}` {_WHAT[rule]} {scope}, which would be a trace capture. {why}"
    else:
        scope = f"while trace {ev.trace} is being captured on device {ev.device}"
        message = f"`{name}` {_WHAT[rule]} {scope}. {_WHY[rule]}"
    evidence: dict = {"call": name, "kind": str(ev.kind), "device": ev.device}
    if region is not None:
        evidence["region"] = region
        evidence["occurrences"] = len(calls)
    else:
        evidence["trace"] = ev.trace
    raised = next((e for t, e in calls for e in (t, e) if e.status is Status.RAISED), None)
    if raised is not None:
        evidence["raised"] = raised.error
        message += f" This run raised: {raised.error}"
    tensors = [t for t in ev.inputs + ev.outputs if t.buffer is not None]
    if tensors:
        b = tensors[0].buffer
        assert b is not None
        evidence["buffer"] = f"{b.buffer_type} {b.address:#x} ({b.address}), {b.size} bytes/bank"
    if rule == "TR008":
        evidence["tensors"] = [f"{t.storage} {list(t.shape)} {t.dtype}" for t in ev.inputs]
    related = [seq for t, e in calls for seq in (t.seq, e.seq)]
    site = ctx.site(ev)
    if site is not None:
        evidence["location"] = f"{short_file(site.file)}:{site.line}"
    return finding(rule, ctx, ev, message, fix=_FIX[rule], related=related, evidence=evidence,
                   trace=None if region is not None else ev.trace)  # fmt: skip
