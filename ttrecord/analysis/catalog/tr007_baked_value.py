"""TR007 value baked into the trace: the rule's declaration."""

from __future__ import annotations

from ttrecord.analysis import baked_values
from ttrecord.analysis.rules import Rule
from ttrecord.findings import Severity

RULE = Rule(
    id="TR007",
    title="Value baked into the trace",
    severity=Severity.WARNING,
    levels="error / warning",
    summary="Python value baked into the trace (values recorded at that line differ)",
    reported_when=(
        "a scalar or shape argument of a captured op took more than one value across the eager "
        "(and prep) calls at the same call path and the captured call: the eager calls along the "
        "longest call path the captured call shares with them (its line and its nearest callers:"
        " one wrapper line called per layer is one"
        " path per layer; the j-th of k calls along one path in a capture is compared with the eager"
        " calls at position j modulo k) when there are any, else every eager call at its line; not"
        " when several traces each captured a value of their own at that path, each one the eager"
        " run passed (one trace per key, e.g. a prefill trace per sequence length) (one finding per"
        " call path, counting the traces that captured it; warning in audit mode, where nothing"
        " was captured)"
    ),
    at="the captured op",
    why=(
        "A Python scalar or shape argument of a captured op differed between eager iterations of "
        "the same call site; every replay uses the captured value."
    ),
    fix=(
        "Pass values that change between steps as device tensors (updated with "
        "ttnn.copy_host_to_device_tensor), or capture one trace per value."
    ),
    detect=baked_values.detect,
    rank=100,
    evidence="`values` (per tensor, the values seen per call), `captured` (the value baked in), `calls_compared`",
)
