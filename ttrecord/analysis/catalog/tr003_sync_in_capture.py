"""TR003 device synchronization inside trace capture: the rule's declaration."""

from __future__ import annotations

from collections.abc import Sequence

from ttrecord.analysis import sub_devices, transfers_in_capture
from ttrecord.analysis.context import Context
from ttrecord.analysis.rules import Rule
from ttrecord.events import Event
from ttrecord.findings import Finding, Severity


def detect(events: Sequence[Event], ctx: Context) -> list[Finding]:
    return transfers_in_capture.detect(events, ctx, "TR003") + sub_devices.detect_switch_in_capture(events, ctx)


RULE = Rule(
    id="TR003",
    title="Device synchronization inside trace capture",
    severity=Severity.ERROR,
    levels="error",
    summary="synchronize / event wait inside a capture",
    reported_when=(
        "`synchronize_device` or an event wait runs while a capture is active; or a sub-device"
        " manager load or clear that changes the active manager (ttnn: \"Cannot reset worker state"
        " during trace capture\")"
    ),
    at="the sync",
    why=(
        "synchronize_device or an event wait while a capture is active; real ttnn aborts event "
        "synchronization during capture."
    ),
    fix=(
        "Synchronize before begin_trace_capture or after execute_trace, never inside the captured "
        "region."
    ),
    detect=detect,
)
