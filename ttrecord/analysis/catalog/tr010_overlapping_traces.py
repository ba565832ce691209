"""TR010 overlapping trace regions: the rule's declaration."""

from __future__ import annotations

from collections.abc import Sequence

from ttrecord.analysis import dynamic_trace_overlap, trace_memory
from ttrecord.analysis.context import Context
from ttrecord.analysis.rules import Rule
from ttrecord.events import Event
from ttrecord.findings import Finding, Severity


def detect(events: Sequence[Event], ctx: Context) -> list[Finding]:
    """Shared memory of live traces, and (trace_region_size=0) a trace buffer placed on a live
    trace's memory (`dynamic_trace_overlap`)."""
    return trace_memory.detect_overlapping_traces(events, ctx) + dynamic_trace_overlap.detect(events, ctx)


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
        "error: a value one live trace wrote (an output it keeps) is used after the other live"
        " trace's replay overwrote it: read by the host or another trace's replay, or by an eager"
        " op whose result is used in turn (the message names the use); or their "
        "trace buffers overlap. info: the two traces share memory that way but no such use "
        "happened (nothing read the overwritten value, or only ops whose results nothing used); or, with `trace_region_size=0`, a trace's command buffer was placed (top-down"
        " in DRAM) on memory a live trace's captured ops write (an error once that trace replayed"
        " and then this one: its commands were overwritten; ttnn 0.76 and later refuse the capture"
        " instead, TR016)"
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
    detect=detect,
    rank=80,
    evidence="`output`, `output_of`, `overwritten_by` (`trace`, `execute`, `at`), `used` (the use the value flow found: `how`, `event`, `through` (ops between the read and the use)), `trace_N` (the range in trace N), `traces`; for a dynamic trace buffer on a live trace's memory `trace_buffer`, `other_trace`, `other_access` (`by`, `role`), `replays` (`overwrote`, `ran`), `latent`",
)
