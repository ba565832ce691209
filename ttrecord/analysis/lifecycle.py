"""TR009 trace lifecycle errors.

Rules, per device and trace id, following the calls in order:
- `execute_trace` of a trace that was never captured on that device, was released already,
  or is still being captured; when the same id was captured on another device, the finding
  says so (a capture replayed on the wrong device);
- `begin_trace_capture` while another capture is active on the same device;
- `release_trace` of a trace that is not live;
- a capture that never ended, or a trace never released, in a run that ended normally (a run
  that died inside the capture is reported by the hazard that killed it, not here).

Why replay breaks: a trace lives in the device's trace region from end_trace_capture until
release_trace. Executing anything else replays nothing or stale commands; an unreleased trace
keeps its trace-region memory and the addresses it captured reserved in the program's mind but
not in the allocator's, which is how later allocations land on them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ttrecord.analysis.context import Context, TraceInfo
from ttrecord.analysis.rules import finding, where
from ttrecord.events import Event, Kind
from ttrecord.findings import Finding, Severity


def detect(events: Sequence[Event], ctx: Context) -> list[Finding]:
    findings: list[Finding] = []
    by_key: dict[tuple, list[TraceInfo]] = {}
    for t in ctx.traces:
        by_key.setdefault(t.key, []).append(t)
    capturing: dict[int | None, TraceInfo] = {}
    reported_sites: set = set()
    # Replays of a live trace, the common case, decided once here (a run replays ~1e5 times).
    fine = {id(e) for t in ctx.traces if t.end is not None for e in t.executes if t.live_at(e.seq)}
    for ev in events:
        kind = ev.kind
        if kind is Kind.TRACE_BEGIN:
            active = capturing.get(ev.device)
            if active is not None and active.end is not None and active.end.seq < ev.seq:
                active = None
            if active is not None:
                findings.append(_nested(ctx, ev, active))
            begun = ctx.trace_by_begin.get(ev.seq)
            if begun is not None:
                capturing[ev.device] = begun
        elif kind is Kind.TRACE_EXECUTE:
            if id(ev) in fine:
                continue
            problem = _execute_problem(ev, by_key, ctx)
            if problem is None:
                continue
            site = ctx.site(ev)
            key = ((site.file, site.line) if site else ev.seq, problem[0])
            if key not in reported_sites:
                reported_sites.add(key)
                findings.append(finding("TR009", ctx, ev, problem[0], fix=problem[1],
                                        evidence=problem[2], trace=ev.trace))  # fmt: skip
        elif kind is Kind.TRACE_RELEASE:  # noqa: SIM102 - one branch per event kind
            mine = by_key.get((ev.device, ev.trace), ())
            if not any(t.release is ev or t.live_at(ev.seq) for t in mine):
                earlier = [t.release for t in mine if t.release is not None and t.release.seq < ev.seq]
                if earlier:  # a second release: ttnn treats it as a no-op, nothing changes
                    findings.append(finding(
                        "TR009", ctx, ev,
                        f"release_trace releases trace {ev.trace} on device {ev.device} again: it"
                        f" was released at {where(ctx, earlier[-1])}. Releasing a"
                        " released trace does nothing (no replay runs, no memory is freed twice),"
                        " so no value changed; a trace id reused by a later capture in between"
                        " would be released instead.",
                        fix="Release each trace once, after its last execute_trace.",
                        evidence={"trace": ev.trace, "device": ev.device,
                                  "released_at": where(ctx, earlier[-1])},
                        severity=Severity.INFO,
                    ))  # fmt: skip
                    continue
                findings.append(finding(
                    "TR009", ctx, ev,
                    f"release_trace releases trace {ev.trace} on device {ev.device}, which is not"
                    " a live trace there (never captured, still being captured, or released"
                    " already).",
                    fix="Release each trace exactly once, after its last execute_trace.",
                    evidence={"trace": ev.trace, "device": ev.device},
                ))  # fmt: skip
    if ctx.ended_normally:
        findings += _never_finished(ctx)
    return findings


def _execute_problem(ev: Event, by_key: dict, ctx: Context) -> tuple[str, str, dict] | None:
    mine = by_key.get((ev.device, ev.trace), [])
    if any(t.live_at(ev.seq) for t in mine):
        return None
    evidence: dict[str, Any] = {"trace": ev.trace, "device": ev.device}
    if any(t.begin.seq < ev.seq and (t.end is None or t.end.seq > ev.seq) for t in mine):
        return (
            f"execute_trace runs trace {ev.trace} on device {ev.device} while it is still being"
            " captured; a trace can be replayed only after end_trace_capture.",
            "Call ttnn.end_trace_capture before the first ttnn.execute_trace.",
            evidence,
        )
    released = [t for t in mine if t.release is not None and t.release.seq < ev.seq]
    if released:
        evidence["released_at"] = where(ctx, released[-1].release)
        return (
            f"execute_trace runs trace {ev.trace} on device {ev.device}, which was released at"
            f" {where(ctx, released[-1].release)}. Its trace-region memory may already hold"
            " another trace, so the replay runs whatever commands are there now.",
            "Execute the trace before ttnn.release_trace, or capture it again.",
            evidence,
        )
    elsewhere = [t for (dev, tid), ts in by_key.items() if tid == ev.trace and dev != ev.device
                 for t in ts if t.end is not None and t.begin.seq < ev.seq]  # fmt: skip
    if elsewhere:
        evidence["captured_on"] = elsewhere[-1].device
        evidence["captured_at"] = where(ctx, elsewhere[-1].begin)
        return (
            f"execute_trace replays trace {ev.trace} on device {ev.device}, but that trace was"
            f" captured on device {elsewhere[-1].device} (at {where(ctx, elsewhere[-1].begin)})."
            " A trace holds addresses and commands for the device that captured it.",
            "Execute each trace on the device (or mesh device) that captured it; capture a"
            " separate trace per device.",
            evidence,
        )
    return (
        f"execute_trace runs trace {ev.trace} on device {ev.device}, which was never captured"
        " there.",
        "Pass the trace id returned by ttnn.begin_trace_capture for this device.",
        evidence,
    )


def _nested(ctx: Context, ev: Event, active: TraceInfo) -> Finding:
    return finding(
        "TR009", ctx, ev,
        f"begin_trace_capture starts a capture on device {ev.device} while trace"
        f" {active.trace_id} (begun at {where(ctx, active.begin)}) is still being captured.",
        fix="End the first capture with ttnn.end_trace_capture before beginning another.",
        related=[active.begin.seq], evidence={"device": ev.device, "active_trace": active.trace_id},
    )  # fmt: skip


def _never_finished(ctx: Context) -> list[Finding]:
    findings: list[Finding] = []
    for t in ctx.traces:
        if t.end is None and t.end_raised is not None:
            continue  # ended, and ttnn refused the trace: that error is the finding (TR016...)
        if t.end is None:
            findings.append(finding(
                "TR009", ctx, t.begin,
                f"The capture of trace {t.trace_id} on device {t.device} begun here never ends:"
                " the program finished without end_trace_capture, so the trace was never"
                " usable and the device stayed in capture mode.",
                fix="Call ttnn.end_trace_capture(device, trace_id) after the captured ops.",
                trace=t.trace_id, evidence={"trace": t.trace_id, "device": t.device},
            ))  # fmt: skip
        elif t.release is None:
            runs = len(t.executes)
            f = finding(
                "TR009", ctx, t.begin,
                f"Trace {t.trace_id} captured here on device {t.device} (replayed {runs} times)"
                " is never released. It keeps its trace-region memory for the life of the"
                " device, and every buffer allocated afterwards competes with the addresses"
                " it replays.",
                fix=f"Call ttnn.release_trace(device, {t.trace_id}) after its last execute_trace.",
                trace=t.trace_id, related=[t.end.seq],
                evidence={"trace": t.trace_id, "device": t.device, "executions": runs},
            )  # fmt: skip
            if ctx.stopped_itself and runs:
                # The program stopped itself after replaying it: a finding that corrupted
                # those replays is why it never got to release_trace.
                f.links["stopped_unreleased"] = {t.key}
            findings.append(f)
    return findings
