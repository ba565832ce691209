"""Hazard analysis: recorded events in, findings out.

Each detector module covers one family of the hazard catalog (TR001–TR011, see `rules.py`)
and exposes `detect(events, ctx) -> list[Finding]`, a pure function of the event stream and the
facts `Context` derives from it. Adding a detector is one module and one line in DETECTORS.
`analyze(session)` runs them all over a stored session; `ttrecord check` stores the result with
`replace_findings` so viewers read findings without recomputing them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ttrecord.analysis import (
    baked_values,
    lifecycle,
    replay_verification,
    trace_inputs,
    trace_memory,
    transfers_in_capture,
)
from ttrecord.analysis.context import Context
from ttrecord.analysis.grouping import group
from ttrecord.events import Event
from ttrecord.findings import Finding

Detector = Callable[[Sequence[Event], Context], list[Finding]]

DETECTORS: list[Detector] = [
    transfers_in_capture.detect,  # TR001 TR002 TR003 TR008
    trace_memory.detect,  # TR004 TR010
    trace_inputs.detect,  # TR005 TR006
    baked_values.detect,  # TR007
    lifecycle.detect,  # TR009
    replay_verification.detect,  # TR011
]


def run_detectors(events: Sequence[Event], ctx: Context | None = None) -> list[Finding]:
    """Every detector over one event list, one finding per mistake (`grouping`), ordered by
    severity, then source position, then rule."""
    ctx = ctx or Context(events)
    findings = group([f for detect in DETECTORS for f in detect(events, ctx)])
    findings.sort(key=lambda f: (-f.severity.rank, f.file or "", f.line or 0, f.rule, f.events[:1]))
    return findings


def analyze_session(session) -> tuple[list[Finding], Context]:
    """Findings of a stored session and the context they were derived from (for reports)."""
    from ttrecord.analysis.loading import load

    info = session.info()
    events, facts, traces = load(session)
    ctx = Context(events, status=info.status, cwd=info.cwd, backend=info.backend, facts=facts,
                  traces=traces)  # fmt: skip
    return run_detectors(events, ctx), ctx


def analyze(session) -> list[Finding]:
    """All findings of a stored session (a `ttrecord.store.reader.Session`)."""
    return analyze_session(session)[0]
