"""The hazard catalog (DESIGN.md: TR001–TR016) and the helpers detectors use to build findings.

Ids, severities and titles are stable: CI configurations, SARIF consumers and stored sessions
refer to them. The `help` text is the default fix a reporter shows when a rule is listed on its
own (SARIF rule metadata); each finding carries a fix hint specific to what was found.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ttrecord.analysis.context import Context
from ttrecord.events import BufferRef, Event
from ttrecord.findings import Finding, Severity, _library


@dataclass(frozen=True, slots=True)
class Rule:
    id: str
    severity: Severity
    title: str
    help: str  # the default fix

    @property
    def why(self) -> str:
        """The rule and why it breaks replay, for rule listings (SARIF fullDescription)."""
        return WHY[self.id]


RULES: dict[str, Rule] = {
    r.id: r
    for r in (
        Rule("TR001", Severity.ERROR, "Readback inside trace capture",
             "Move the read (ttnn.to_torch, Tensor.cpu, ...) after ttnn.execute_trace, outside"
             " begin_trace_capture/end_trace_capture."),
        Rule("TR002", Severity.ERROR, "Host write inside trace capture",
             "Pre-allocate the device input before capture and refresh it before each"
             " execute_trace with ttnn.copy_host_to_device_tensor(host, captured_input)."),
        Rule("TR003", Severity.ERROR, "Device synchronization inside trace capture",
             "Synchronize before begin_trace_capture or after execute_trace, never inside the"
             " captured region."),
        Rule("TR004", Severity.ERROR, "Allocation over trace memory",
             "Allocate every buffer the program needs before capture, or release the trace"
             " (ttnn.release_trace) before allocating; deallocate post-capture tensors before"
             " the next execute_trace."),
        Rule("TR005", Severity.ERROR, "Stale or freed trace input",
             "Keep the captured input tensors alive and write new data into them with"
             " ttnn.copy_host_to_device_tensor(host, captured_input) or"
             " ttnn.copy(new, captured_input) before execute_trace."),
        Rule("TR006", Severity.WARNING, "Trace input/output aliasing",
             "Give each captured input its own buffer, keep outputs separate from inputs, and"
             " read (or ttnn.clone) a replay's output before the next execute_trace."),
        Rule("TR007", Severity.WARNING, "Value baked into the trace",
             "Pass values that change between steps as device tensors (updated with"
             " ttnn.copy_host_to_device_tensor), or capture one trace per value."),
        Rule("TR008", Severity.WARNING, "Host work inside trace capture",
             "Do host-side work before capture or after execute_trace; inside the captured"
             " region use only device ops on device tensors."),
        Rule("TR009", Severity.ERROR, "Trace lifecycle error",
             "Pair every begin_trace_capture with end_trace_capture, execute only live traces on"
             " the device that captured them, and call ttnn.release_trace when done."),
        Rule("TR010", Severity.ERROR, "Overlapping trace regions",
             "Release one trace before capturing the next, or keep the buffers each trace writes"
             " alive (and distinct) while both traces are in use."),
        Rule("TR011", Severity.ERROR, "Replay differs from eager run",
             "Keep every captured input alive and write new data into it in place; allocate"
             " nothing over trace memory while the trace lives."),
        Rule("TR013", Severity.ERROR, "Compile inside trace capture",
             "Warm up with the exact captured sequence (same shapes, dtypes, layouts and memory"
             " configs) before begin_trace_capture."),
        Rule("TR014", Severity.WARNING, "Compile after capture while a trace is live",
             "Compile every op (run each path once) before the first begin_trace_capture, or"
             " release the trace before running new ops."),
        Rule("TR015", Severity.WARNING, "Capture differs from its prep run",
             "Make the prep run execute exactly the captured sequence (same ops, shapes,"
             " dtypes, layouts and memory configs) before begin_trace_capture."),
        Rule("TR016", Severity.ERROR, "Trace region too small",
             "Open the device with a larger trace_region_size (at least 10% headroom)."),
    )
}  # fmt: skip


WHY: dict[str, str] = {
    "TR001": "A device-to-host read while a capture is active on that device. Traces replay"
    " device commands only; real ttnn aborts reads during capture.",
    "TR002": "A host-to-device write while a capture is active. The write would happen once at"
    " capture time; real ttnn aborts writes during capture.",
    "TR003": "synchronize_device or an event wait while a capture is active; real ttnn aborts"
    " event synchronization during capture.",
    "TR004": "A buffer allocated after end_trace_capture (trace not released) overlapping an"
    " address range the trace reads or writes, live across an execute_trace: the replay"
    " silently overwrites it.",
    "TR005": "A buffer the trace reads is freed after capture, or new input data goes to a new"
    " tensor instead of into the captured buffer before execute_trace: the replay computes on"
    " stale or foreign data.",
    "TR006": "Two captured inputs share a buffer, a trace output is also an input, or a replay's"
    " output is read after the next replay overwrote it.",
    "TR007": "A Python scalar or shape argument of a captured op differed between eager"
    " iterations of the same call site; every replay uses the captured value.",
    "TR008": "Host work inside the capture region: it is not recorded, so replay skips it.",
    "TR009": "Execute of a released or unknown trace, a trace never released, a capture never"
    " ended, or a capture replayed on another device.",
    "TR010": "Two live traces whose written address ranges or trace buffers overlap: replaying"
    " one corrupts the other's results.",
    "TR011": "With `ttrecord run --verify-replay`: after a replay, an output differed from an"
    " eager re-run of the captured ops on the same inputs, or a tensor the trace does not own"
    " changed. The replay read or wrote memory that no longer holds what the capture assumed.",
    "TR013": "The device's program cache grew during a call inside a capture: the warm-up did"
    " not compile that program, and compiling writes kernel binaries, which a capture cannot"
    " record (real ttnn aborts: 'Writes are not supported during trace capture').",
    "TR014": "The device's program cache grew during a call made while a trace was live: the"
    " op's kernel binaries were allocated after capture, possibly over memory the trace writes.",
    "TR015": "The capture runs other ops, or the same ops on other shapes, dtypes, layouts or"
    " memory configs, than the prep run right before it: the prep run warmed another path.",
    "TR016": "A capture's trace buffers do not fit in the trace_region_size the device was"
    " opened with (end_trace_capture raises), or live traces fill more than 90% of it.",
}


def hexdec(value: int) -> str:
    """An address or size as users see it in ttnn logs and the allocator report: hex and decimal."""
    return f"{value:#x} ({value})"


def range_evidence(buf: BufferRef) -> dict[str, Any]:
    return {
        "device": buf.device,
        "buffer_type": buf.buffer_type,
        "address": hexdec(buf.address),
        "end": hexdec(buf.end),
        "size": hexdec(buf.size),
        "range": f"[{buf.address:#x}, {buf.end:#x})",
    }


def short_file(path: str | None) -> str:
    return Path(path).name if path else "?"


def where(ctx: Context, ev: Event) -> str:
    site = ctx.site(ev)
    return f"{short_file(site.file)}:{site.line}" if site else f"event {ev.seq}"


def finding(rule: str, ctx: Context, culprit: Event, message: str, *, fix: str | None = None,
            related: list[int] | tuple[int, ...] = (), evidence: dict[str, Any] | None = None,
            trace: int | None = None, severity: Severity | None = None) -> Finding:  # fmt: skip
    """A finding pinned to the user's line of `culprit` (the call that caused the hazard)."""
    meta = RULES[rule]
    site = ctx.site(culprit)
    evidence = dict(evidence or {})
    if site is None:
        # No call made it (a free by a dropped Python reference): pinned to the interval
        # between the two recorded calls around it, and said so.
        before, after = ctx.facts.calls_around(culprit.seq)
        anchor = before or after
        site = anchor.callsite if anchor is not None else None
        evidence["between"] = {
            "after": f"`{before.name}` at {where(ctx, before)}" if before else "the start of the run",
            "before": f"`{after.name}` at {where(ctx, after)}" if after else "the end of the run",
        }
        message += (
            f" No ttnn call did this (event {culprit.seq}): it happened between"
            f" {evidence['between']['after']} and {evidence['between']['before']}, for example"
            " where the program dropped its last reference to a tensor; the line shown is the"
            " last recorded call before it."
        )
    events = [culprit.seq] + [s for s in dict.fromkeys(related) if s != culprit.seq]
    file, line, function = (site.file, site.line, site.function) if site else (None, None, None)
    stack = [(f[0], f[1], f[2]) for f in site.stack] if site else []
    if file and _library(file):
        # The call is inside installed library code (an executor or tracer class from a
        # package): the fix goes where the user's code calls into it; the library line is
        # kept as the helper frame.
        i = next((i for i, f in enumerate(stack) if f and f[0] and not _library(f[0])), None)
        if i is not None:
            evidence["helper"] = f"{file}:{line} in {function}"
            (file, line, function), stack = stack[i][:3], stack[i + 1 :]
    return Finding(
        rule=rule,
        severity=severity or meta.severity,
        title=meta.title,
        message=message,
        fix=fix or meta.help,
        file=file,
        line=line,
        function=function,
        stack=stack,
        events=events,
        evidence=evidence,
        device=culprit.device,
        trace=trace if trace is not None else culprit.trace,
    )
