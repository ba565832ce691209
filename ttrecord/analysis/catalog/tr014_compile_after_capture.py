"""TR014 compile after capture while a trace is live: the rule's declaration."""

from __future__ import annotations

from ttrecord.analysis import compile_after_capture
from ttrecord.analysis.rules import Rule
from ttrecord.findings import Severity

RULE = Rule(
    id="TR014",
    title="Compile after capture while a trace is live",
    severity=Severity.WARNING,
    levels="warning",
    summary=(
        "an op compiled after capture while the trace is live and left kernel binaries (over trace"
        " memory: TR004)"
    ),
    reported_when=(
        "a call made while a trace is live (after its capture) grew the program cache and left "
        "buffers that are none of its outputs (kernel binaries). A binary over a range the trace "
        "reads, writes or creates that is alive at a replay is reported once, as TR004 at the same"
        " line. A compile with no visible binaries is not reported (the 0.81.1 mock device lists "
        "none; the emulator does not allocate them)"
    ),
    at="the call that compiled",
    why=(
        "The device's program cache grew during a call made while a trace was live: the op's "
        "kernel binaries were allocated after capture, possibly over memory the trace writes."
    ),
    fix=(
        "Compile every op (run each path once) before the first begin_trace_capture, or release "
        "the trace before running new ops."
    ),
    detect=compile_after_capture.detect,
    facts=("compile_allocations",),
)
