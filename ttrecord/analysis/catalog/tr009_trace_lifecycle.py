"""TR009 trace lifecycle error: the rule's declaration."""

from __future__ import annotations

from collections.abc import Sequence

from ttrecord.analysis import lifecycle, sub_devices
from ttrecord.analysis.context import Context
from ttrecord.events import Event
from ttrecord.findings import Finding
from ttrecord.analysis.rules import FoldsUnder, Rule
from ttrecord.findings import Severity


def detect(events: Sequence[Event], ctx: Context) -> list[Finding]:
    found = lifecycle.detect(events, ctx)
    removed = sub_devices.traces_freed_by_removal(events)
    if removed:  # a trace its removed sub-device manager took with it was released by that
        found = [f for f in found if not ("is never released" in f.message
                                          and (f.evidence.get("device"), f.evidence.get("trace")) in removed)]
    return found + sub_devices.detect_trace_under_other_manager(events, ctx)


RULE = Rule(
    id="TR009",
    title="Trace lifecycle error",
    severity=Severity.ERROR,
    levels="error / info",
    summary="trace lifecycle (execute after release, never released, never ended, wrong device)",
    reported_when=(
        "`execute_trace` of a trace never captured on that device, released, still being captured,"
        " or captured on another device; `begin_trace_capture` during another capture; "
        "`release_trace` of a trace not live; and, in a run that ended normally, a capture never "
        "ended (not one whose `end_trace_capture` raised: that error is the finding) or a trace "
        "never released. Info for a second `release_trace` of a trace released already (a no-op"
        " in ttnn: nothing is replayed or freed twice). Also `end_trace_capture`, `execute_trace` or"
        " `release_trace` of a trace under another sub-device manager than the one active at its"
        " `begin_trace_capture`"
    ),
    at="the execute / begin / release call; the `begin_trace_capture`",
    why=(
        "Execute of a released or unknown trace, a trace never released, a capture never ended, or"
        " a capture replayed on another device."
    ),
    fix=(
        "Pair every begin_trace_capture with end_trace_capture, execute only live traces on the "
        "device that captured them, and call ttnn.release_trace when done."
    ),
    detect=detect,
    rank=10,
    evidence="`released_at`, `executions`, `active_trace`; for a replay on another device `captured_on` (device), `captured_at`; under another sub-device manager `captured_under`, `active_manager`",
    folds_under=(
        FoldsUnder("TR005", "stopped_unreleased", "replayed_stale",
                   "the program stopped itself (a failure exit) after replaying this trace on a"
                   " stale or freed input, before it reached release_trace"),
    ),
)
