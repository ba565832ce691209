"""TR006 trace input/output aliasing: the rule's declaration."""

from __future__ import annotations

from ttrecord.analysis import trace_inputs
from ttrecord.analysis.rules import Rule
from ttrecord.findings import Severity

RULE = Rule(
    id="TR006",
    title="Trace input/output aliasing",
    severity=Severity.WARNING,
    levels="warning / error",
    summary="input/output aliasing",
    reported_when=(
        "two different tensors the trace takes as inputs share memory; a captured op (other than "
        "an in-place cache update) writes into a trace input; or one trace output is read more "
        "than once after a single replay although two or more replays ran since its last read "
        "(an error: the values it reads were overwritten)"
    ),
    at="the captured op / the repeated read",
    why=(
        "Two captured inputs share a buffer, a trace output is also an input, or a replay's output"
        " is read after the next replay overwrote it."
    ),
    fix=(
        "Give each captured input its own buffer, keep outputs separate from inputs, and read (or "
        "ttnn.clone) a replay's output before the next execute_trace."
    ),
    detect=trace_inputs.detect_aliasing,
    rank=90,
    evidence="`output` (buffer), `replays_before_read`, `consequence` (what the program read); for an op writing into a trace input `buffer`, `written_by`, `read_by` (event seqs); for two trace inputs on one buffer `first`, `second` (buffers), `tensor_ids`",
)
