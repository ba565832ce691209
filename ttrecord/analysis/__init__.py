"""Hazard analysis: recorded events in, findings out.

Each detector module covers one family of the hazard catalog (TR001–TR011, see `rules.py`)
and exposes `detect(events, ctx) -> list[Finding]`, a pure function of the event stream and the
facts `Context` derives from it. Adding a detector is one module and one line in DETECTORS.
`analyze(session)` runs them all over a stored session; `ttrecord check` stores the result with
`replace_findings` so viewers read findings without recomputing them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from ttrecord.analysis import (
    baked_values,
    compile_after_capture,
    compile_in_capture,
    lifecycle,
    prep_drift,
    replay_verification,
    trace_inputs,
    trace_memory,
    trace_region,
    transfers_in_capture,
)
from ttrecord.analysis.context import Context
from ttrecord.analysis.grouping import group
from ttrecord.events import Event
from ttrecord.findings import Finding

if TYPE_CHECKING:
    from ttrecord.store.reader import Session

Detector = Callable[[Sequence[Event], Context], list[Finding]]

DETECTORS: list[Detector] = [
    transfers_in_capture.detect,  # TR001 TR002 TR003 TR008
    trace_memory.detect,  # TR004 TR010
    trace_inputs.detect,  # TR005 TR006
    baked_values.detect,  # TR007
    lifecycle.detect,  # TR009
    replay_verification.detect,  # TR011
    compile_in_capture.detect,  # TR013
    compile_after_capture.detect,  # TR014
    prep_drift.detect,  # TR015
    trace_region.detect,  # TR016
]


def run_detectors(events: Sequence[Event], ctx: Context | None = None,
                  on_step: Callable[[str], None] | None = None) -> list[Finding]:  # fmt: skip
    """Every detector over one event list, one finding per mistake (`grouping`), ordered by
    severity, then source position, then rule. `on_step(name)` is called before each detector
    (progress bars)."""
    ctx = ctx or Context(events)
    found = []
    for detect in DETECTORS:
        if on_step is not None:
            on_step(f"checking {detect.__module__.rsplit('.', 1)[-1].replace('_', ' ')}")
        found += detect(events, ctx)
    findings = group(found)
    findings.sort(key=lambda f: (-f.severity.rank, f.file or "", f.line or 0, f.rule, f.events[:1]))
    return findings


STEPS = 1 + len(DETECTORS)  # for progress bars: loading, then each detector


def load_context(session: Session) -> Context:
    """The events the detectors scan and the facts about the rest, as one Context."""
    from ttrecord.analysis.loading import load

    info = session.info()
    events, facts, traces = load(session)
    return Context(events, status=info.status, cwd=info.cwd, backend=info.backend, facts=facts,
                   traces=traces)  # fmt: skip


def analyze_session(session: Session, on_step: Callable[[str], None] | None = None) -> tuple[list[Finding], Context]:
    """Findings of a stored session and the context they were derived from (for reports)."""
    if on_step is not None:
        on_step("reading the session")
    ctx = load_context(session)
    return run_detectors(ctx.events, ctx, on_step), ctx


def analyze(session: Session, on_step: Callable[[str], None] | None = None) -> list[Finding]:
    """All findings of a stored session (a `ttrecord.store.reader.Session`)."""
    return analyze_session(session, on_step)[0]
