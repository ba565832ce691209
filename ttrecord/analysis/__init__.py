"""Hazard analysis: recorded events in, findings out.

Each rule of the hazard catalog is one module of `catalog/` that declares itself (id, texts,
the facts it needs, its `detect(events, ctx) -> list[Finding]`, a pure function of the event
stream and the facts `Context` derives from it); `registry.py` finds them. Adding a rule is
adding one module there.
`analyze(session)` runs them all over a stored session; `ttrecord check` stores the result with
`replace_findings` so viewers read findings without recomputing them.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING

from ttrecord.analysis.call_paths import place
from ttrecord.analysis.chips import name_chips
from ttrecord.analysis.context import Context
from ttrecord.analysis.grouping import group
from ttrecord.events import Event
from ttrecord.findings import Finding

if TYPE_CHECKING:
    from ttrecord.store.reader import Session


@contextmanager
def no_cycle_collection() -> Iterator[None]:
    """Python's cycle collector paused while the analysis builds its objects (restored after).

    Loading a long run makes a few hundred thousand events, references and tuples that all
    live until the analysis ends and form no garbage cycles; each full collection meanwhile
    walks every one of them again (on 1M events with 1,000 captures, 7 full collections cost
    about a fifth of `check`). Reference counting still frees everything as usual."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def run_detectors(events: Sequence[Event], ctx: Context | None = None,
                  on_step: Callable[[str], None] | None = None) -> list[Finding]:  # fmt: skip
    """Every registered rule over one event list, one finding per mistake (`grouping`), ordered
    by severity, then source position, then rule. `on_step(name)` is called before each rule
    (progress bars)."""
    with no_cycle_collection():
        return _run_detectors(events, ctx, on_step)


def _run_detectors(events: Sequence[Event], ctx: Context | None,
                   on_step: Callable[[str], None] | None) -> list[Finding]:  # fmt: skip
    from ttrecord.analysis.registry import rules

    ctx = ctx or Context(events)
    found = []
    for rule in rules().values():
        if on_step is not None:
            on_step(f"checking {rule.id} {rule.title[0].lower()}{rule.title[1:]}")
        found += rule.detect(events, ctx)
    place(found, ctx)
    findings = group(found)
    name_chips(findings, ctx)
    findings.sort(key=lambda f: (-f.severity.rank, f.file or "", f.line or 0, f.rule, f.events[:1]))
    return findings


def __getattr__(name: str) -> int:
    """`STEPS`, for progress bars: loading, then each registered rule."""
    if name == "STEPS":
        from ttrecord.analysis.registry import rules

        return 1 + len(rules())
    raise AttributeError(name)


def load_context(session: Session) -> Context:
    """The events the detectors scan and the facts about the rest, as one Context."""
    from ttrecord.analysis.loading import load

    info = session.info()
    with no_cycle_collection():
        events, facts, traces = load(session)
    return Context(events, status=info.status, cwd=info.cwd, backend=info.backend, facts=facts,
                   traces=traces, exit_code=info.exit_code)  # fmt: skip


def analyze_session(session: Session, on_step: Callable[[str], None] | None = None) -> tuple[list[Finding], Context]:
    """Findings of a stored session and the context they were derived from (for reports)."""
    if on_step is not None:
        on_step("reading the session")
    ctx = load_context(session)
    return run_detectors(ctx.events, ctx, on_step), ctx


def analyze(session: Session, on_step: Callable[[str], None] | None = None) -> list[Finding]:
    """All findings of a stored session (a `ttrecord.store.reader.Session`)."""
    return analyze_session(session, on_step)[0]
