"""TR016 trace region too small: the rule's declaration."""

from __future__ import annotations

from ttrecord.analysis import trace_region
from ttrecord.analysis.rules import Rule
from ttrecord.findings import Severity

RULE = Rule(
    id="TR016",
    title="Trace region too small",
    severity=Severity.ERROR,
    levels="error / warning",
    summary=(
        "a capture does not fit the trace region (error), or live traces fill more than 90% of it "
        "(warning)"
    ),
    reported_when=(
        "`end_trace_capture` raised \"Creating trace buffers of size NB on MeshDevice M, but only "
        "KB is allocated for trace region.\" (or the older \"on device D\" wording), or, with "
        "`trace_region_size=0` (dynamic trace buffers placed top-down in DRAM), \"Trace buffer at "
        "address A overlaps with ...\" (DRAM the capture allocated or freed, or a live trace's "
        "mark); warning when the live trace buffers' high-water mark exceeds 90% of a fixed "
        "`trace_region_size`"
    ),
    at="the `open_device` call (where `trace_region_size` is set)",
    why=(
        "A capture's trace buffers do not fit in the trace_region_size the device was opened with "
        "(end_trace_capture raises), a dynamic trace buffer (trace_region_size=0) lands on DRAM "
        "its capture used, or live traces fill more than 90% of the region."
    ),
    fix="Open the device with a larger trace_region_size (at least 10% headroom).",
    detect=trace_region.detect,
    facts=("trace_buffers",),
    rank=150,
    evidence="`trace_region_size`, `dram_banks`, `high_water`, `high_water_per_bank`, `trace_sizes`, `region_per_bank`, `needed`, `needed_per_bank` (bytes); for a refused dynamic trace buffer `dynamic`, `message` (the TT_FATAL's kind), `trace_buffer_address`, `high_water_mark`, `live_trace_buffers` (address per trace)",
)
