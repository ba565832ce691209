"""TR014 compile after capture while a trace is live: the rule's declaration."""

from __future__ import annotations

from ttrecord.analysis import compile_after_capture
from ttrecord.analysis.rules import Rule
from ttrecord.findings import Severity

RULE = Rule(
    id="TR014",
    title="Compile after capture while a trace is live",
    severity=Severity.WARNING,
    levels="error / warning / info",
    summary=(
        "an op compiled after capture while the trace is live and its kernel binaries lie on the"
        " trace's memory (error once a replay overwrote them)"
    ),
    reported_when=(
        "a call made while a trace is live (after its capture) grew the program cache and left "
        "buffers that are none of its outputs (kernel binaries) on a range that trace reads, "
        "writes or creates: error when a replay of that trace ran while the binary was allocated "
        "(the replay overwrote it; TR004 leaves such a buffer to TR014), warning otherwise. "
        "Info (latent, layout luck) when the binaries landed clear of every live trace's memory, "
        "or none are visible (the 0.81.1 mock device loads none), and a live trace replayed while "
        "they were allocated: the message gives where they landed and the trace's nearest ranges, "
        "and says that with DRAM fuller they land on the trace's freed intermediates; one per call "
        "path with the count"
    ),
    at="the call that compiled",
    why=(
        "The device's program cache grew during a call made while a trace was live: the op's "
        "kernel binaries were allocated after capture on memory the trace uses, so a replay "
        "overwrites them and the program then runs garbage (wrong values or a hang)."
    ),
    fix=(
        "Compile every op (run each path once) before the first begin_trace_capture, or release "
        "the trace before running new ops."
    ),
    detect=compile_after_capture.detect,
    facts=("compile_allocations",),
    rank=130,
    evidence="`op`, `traces` (live ones), `binaries` (ranges), `overlaps_trace`, `replay` (the execute event that overwrote them; for layout luck the first replay while they were allocated); for layout luck `layout_luck` (`why`, `would_corrupt`, `count`, `clear_of`)",
)
