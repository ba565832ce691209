"""TR013 compile inside trace capture: the rule's declaration."""

from __future__ import annotations

from ttrecord.analysis import compile_in_capture
from ttrecord.analysis.rules import Rule
from ttrecord.findings import Severity

RULE = Rule(
    id="TR013",
    title="Compile inside trace capture",
    severity=Severity.ERROR,
    levels="error",
    summary="an op compiled inside a capture (the program cache grew: incomplete warm-up)",
    reported_when=(
        "the device's program cache grew during a call inside a capture (one finding per capture; "
        "the other calls that compiled are listed)"
    ),
    at="the first captured call that compiled",
    why=(
        "The device's program cache grew during a call inside a capture: the warm-up did not "
        "compile that program, and compiling writes kernel binaries, which a capture cannot record"
        " (ttnn 0.81.1 aborts: 'Cannot load new binaries during trace capture')."
    ),
    fix=(
        "Warm up with the exact captured sequence (same shapes, dtypes, layouts and memory "
        "configs) before begin_trace_capture."
    ),
    detect=compile_in_capture.detect,
    rank=50,
    evidence="`op`, `warm_up` (its warm-up call), `differs` (what changed since), `also_compiled`, `cache_cleared` (where the program cache was cleared since the warm-up)",
)
