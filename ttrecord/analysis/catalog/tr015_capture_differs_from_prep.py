"""TR015 capture differs from its prep run: the rule's declaration."""

from __future__ import annotations

from collections.abc import Sequence

from ttrecord.analysis.context import Context
from ttrecord.analysis.rules import Rule
from ttrecord.events import Event
from ttrecord.findings import Finding, Severity


def detect(events: Sequence[Event], ctx: Context) -> list[Finding]:
    # Imported here: the drift aligner pulls in numpy, and `check --help` lists the rules.
    from ttrecord.analysis import prep_drift

    return prep_drift.detect(events, ctx)


RULE = Rule(
    id="TR015",
    title="Capture differs from its prep run",
    severity=Severity.WARNING,
    levels="warning",
    summary="the capture runs other ops, shapes, layouts or memory configs than its prep run",
    reported_when=(
        "the capture's device ops differ from its prep run's, aligned and compared as "
        "`ttrecord diff --prep` does (the prep run: the eager ops before `begin_trace_capture` "
        "that repeat the captured ones, found by aligning op names and tensor signatures "
        "backwards from the capture, not by lines: a warm-up written as a copy of the captured "
        "block counts; frees, transfers and a block of other ops between the warm-up and the "
        "capture are not part of it; a capture no eager run repeats has none and no finding): an "
        "op only on one side that the other side never ran with the same tensors (a captured "
        "loop over the warmed-up op is no divergence), or another input/output count, shape, "
        "dtype, layout, memory config or buffer type (moved addresses alone do not count; frees "
        "and bare allocations such as `allocate_tensor_on_device` compute nothing and do not "
        "count; host-only ops are left to TR008); left to TR013 when that call compiled"
    ),
    at="the first divergent call (the captured one; the prep run's when the op is only there)",
    why=(
        "The capture runs other ops, or the same ops on other shapes, dtypes, layouts or memory "
        "configs, than the prep run right before it: the prep run warmed another path."
    ),
    fix=(
        "Make the prep run execute exactly the captured sequence (same ops, shapes, dtypes, "
        "layouts and memory configs) before begin_trace_capture."
    ),
    detect=detect,
    facts=("prep_runs",),
    rank=140,
    evidence="`row`, `prep_run` (lines), `only_in` (`capture` or `prep run`), `differs` (what changed, per argument)",
)
