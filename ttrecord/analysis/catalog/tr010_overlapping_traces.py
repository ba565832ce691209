"""TR010 overlapping trace regions: the rule's declaration."""

from __future__ import annotations

from ttrecord.analysis import trace_memory
from ttrecord.analysis.rules import Rule
from ttrecord.findings import Severity

RULE = Rule(
    id="TR010",
    title="Overlapping trace regions",
    severity=Severity.ERROR,
    levels="error / info",
    summary=(
        "a value one live trace wrote read after another trace's replay overwrote it (shared "
        "memory alone: info)"
    ),
    reported_when=(
        "error: a value one live trace wrote (an output it keeps) is read by the host, an eager op"
        " or another trace's replay after the other live trace's replay overwrote it; or their "
        "trace buffers overlap. info: the two traces share memory that way but no such read "
        "happened"
    ),
    at="the read / the second trace's `end_trace_capture`",
    why=(
        "Two live traces whose written address ranges or trace buffers overlap: replaying one "
        "corrupts the other's results."
    ),
    fix=(
        "Release one trace before capturing the next, or keep the buffers each trace writes alive "
        "(and distinct) while both traces are in use."
    ),
    detect=trace_memory.detect_overlapping_traces,
    rank=80,
    evidence="`output`, `output_of`, `overwritten_by` (`trace`, `execute`, `at`), `trace_N` (the range in trace N), `traces`",
)
