"""TR017 trace never replayed: the rule's declaration."""

from __future__ import annotations

from ttrecord.analysis import trace_churn
from ttrecord.analysis.rules import Rule
from ttrecord.findings import Severity

RULE = Rule(
    id="TR017",
    title="Trace never replayed",
    severity=Severity.INFO,
    levels="info",
    summary="a trace was captured but never replayed (wasted capture and trace-region memory)",
    reported_when=(
        "a trace whose capture ended is released without one `execute_trace`, on a device where "
        "the program replays other traces (a trace never released is TR009's)"
    ),
    at="the `begin_trace_capture`",
    why=(
        "A capture costs a prep run, the capture and trace-region memory; a trace never replayed "
        "pays all of it for nothing (tt-metal #57270: a decode trace captured during a "
        "prefill-only warm-up)."
    ),
    fix="Capture a trace only on the path that replays it, or replay it.",
    detect=trace_churn.detect_unreplayed,
    evidence="`ops`, `ended_at`, `released_at` (null when never released)",
)
