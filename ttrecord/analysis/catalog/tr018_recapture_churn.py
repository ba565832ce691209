"""TR018 recapture churn: the rule's declaration."""

from __future__ import annotations

from ttrecord.analysis import trace_churn
from ttrecord.analysis.rules import Rule
from ttrecord.findings import Severity

RULE = Rule(
    id="TR018",
    title="Recapture churn",
    severity=Severity.INFO,
    levels="info",
    summary="one call path releases and recaptures the same trace, or captures many times",
    reported_when=(
        "one call path (the `begin_trace_capture` line and its callers) captures the same "
        "sequence of ops again after releasing the previous trace, or captures more than "
        f"{trace_churn.MAX_CAPTURES_PER_PATH} times (with the counts and the capture and release "
        "lines)"
    ),
    at="the first `begin_trace_capture` of that call path",
    why=(
        "Each capture repeats a prep run and the capture that replays were meant to save; "
        "releasing and recapturing per request collapses throughput (tt-metal PR #51665)."
    ),
    fix=(
        "Capture each variant once and keep its trace live, selecting among traces at replay "
        "time instead of releasing and recapturing."
    ),
    detect=trace_churn.detect_recapture,
    evidence="`captures`, `recaptures_after_release`, `ops_per_capture`, `captured_at`, `released_at` (lines)",
)
