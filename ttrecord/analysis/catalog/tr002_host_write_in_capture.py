"""TR002 host write inside trace capture: the rule's declaration."""

from __future__ import annotations

from collections.abc import Sequence

from ttrecord.analysis import transfers_in_capture
from ttrecord.analysis.context import Context
from ttrecord.analysis.rules import Rule
from ttrecord.events import Event
from ttrecord.findings import Finding, Severity


def detect(events: Sequence[Event], ctx: Context) -> list[Finding]:
    return transfers_in_capture.detect(events, ctx, "TR002")


RULE = Rule(
    id="TR002",
    title="Host write inside trace capture",
    severity=Severity.ERROR,
    levels="error",
    summary="host write inside a capture",
    reported_when="a host-to-device write (any kind) runs while a capture is active",
    at="the write",
    why=(
        "A host-to-device write while a capture is active. The write would happen once at capture "
        "time; real ttnn aborts writes during capture."
    ),
    fix=(
        "Pre-allocate the device input before capture and refresh it before each execute_trace "
        "with ttnn.copy_host_to_device_tensor(host, captured_input)."
    ),
    detect=detect,
    rank=30,
    evidence="`call` (ttnn function), `kind` (`d2h`, `h2d`, `sync`, `op`), `location`, `raised` (the error ttnn raised, if any), `buffer`",
)
