"""TR008 host work inside trace capture: the rule's declaration."""

from __future__ import annotations

from collections.abc import Sequence

from ttrecord.analysis import transfers_in_capture
from ttrecord.analysis.context import Context
from ttrecord.analysis.rules import Rule
from ttrecord.events import Event
from ttrecord.findings import Finding, Severity


def detect(events: Sequence[Event], ctx: Context) -> list[Finding]:
    return transfers_in_capture.detect(events, ctx, "TR008")


RULE = Rule(
    id="TR008",
    title="Host work inside trace capture",
    severity=Severity.WARNING,
    levels="warning",
    summary="host work inside a capture",
    reported_when="an op whose tensors are all host tensors runs while a capture is active",
    at="the op",
    why="Host work inside the capture region: it is not recorded, so replay skips it.",
    fix=(
        "Do host-side work before capture or after execute_trace; inside the captured region use "
        "only device ops on device tensors."
    ),
    detect=detect,
    rank=110,
    evidence="`call` (ttnn function), `kind` (`d2h`, `h2d`, `sync`, `op`), `location`, `raised` (the error ttnn raised, if any), `tensors`",
)
