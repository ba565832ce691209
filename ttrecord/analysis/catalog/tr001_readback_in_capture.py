"""TR001 readback inside trace capture: the rule's declaration."""

from __future__ import annotations

from collections.abc import Sequence

from ttrecord.analysis import transfers_in_capture
from ttrecord.analysis.context import Context
from ttrecord.analysis.rules import Rule
from ttrecord.events import Event
from ttrecord.findings import Finding, Severity


def detect(events: Sequence[Event], ctx: Context) -> list[Finding]:
    return transfers_in_capture.detect(events, ctx, "TR001")


RULE = Rule(
    id="TR001",
    title="Readback inside trace capture",
    severity=Severity.ERROR,
    levels="error",
    summary="readback inside a capture",
    reported_when="a device-to-host read (any kind) runs while a capture is active on its device",
    at="the read",
    why=(
        "A device-to-host read while a capture is active on that device. Traces replay device "
        "commands only; real ttnn aborts reads during capture."
    ),
    fix=(
        "Move the read (ttnn.to_torch, Tensor.cpu, ...) after ttnn.execute_trace, outside "
        "begin_trace_capture/end_trace_capture."
    ),
    detect=detect,
    rank=20,
    evidence="`call` (ttnn function), `kind` (`d2h`, `h2d`, `sync`, `op`), `location`, `raised` (the error ttnn raised, if any), `buffer`",
)
