"""What each screen shows, computed from a session into frozen snapshots.

These functions are pure in the sense that matters here: session in, plain data out, no
widgets. Screens call them inside thread workers and only render the result, so the same
code is easy to test and never blocks the event loop.
"""

from __future__ import annotations

import importlib.util
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import cast

from ttrecord.textsafe import clean, clean_deep
from ttrecord.errors import SessionError
from ttrecord.events import SessionStatus
from ttrecord.findings import Finding
from ttrecord.store.reader import (
    DeviceRow,
    EventFilter,
    Session,
    SessionInfo,
    TimelineRow,
    TraceRow,
)

SOURCE_CONTEXT = 5  # lines either side of a finding's line (it shows on a 24-line terminal)
# Above this many events the analysis takes long enough that `ttrecord check` should run it
# (and store the result) rather than a viewer that the user may want to quit at once.
ANALYSE_ON_OPEN_MAX_EVENTS = 200_000


@dataclass(frozen=True)
class SessionSummary:
    """One line of the sessions list; `error` set when the file cannot be read."""

    path: Path
    info: SessionInfo | None = None
    events: int = 0
    severities: dict[str, int] = field(default_factory=dict)
    died_call: str | None = None
    error: str | None = None


@dataclass(frozen=True)
class OverviewData:
    info: SessionInfo
    events: int
    phases: dict[str, int]
    devices: tuple[DeviceRow, ...]
    traces: tuple[TraceRow, ...]
    findings: tuple[Finding, ...]  # most severe first
    notices: tuple[str, ...]  # running, empty, crashed: said plainly at the top
    needs_analysis: bool = False  # no stored findings: the screen runs the analysis next
    unchecked: bool = False  # no stored findings and too large to analyse on open


@dataclass(frozen=True)
class SourceExcerpt:
    file: str
    text: str  # the whole file; the view shows a window of it
    line: int
    first: int
    last: int


@dataclass(frozen=True)
class CallLine:
    """One frame of a finding's chain below the line to change, with its recorded source."""

    lead: str  # "which calls" / "reached from"
    file: str | None
    line: int | None
    function: str | None
    text: str | None


@dataclass(frozen=True)
class FindingData:
    finding: Finding
    source: SourceExcerpt | None  # around the line to change (report.lead)
    source_note: str | None  # why there is no source, said in the UI
    related: tuple[TimelineRow, ...]
    change: tuple[str | None, int | None, str | None] | None = None  # the line to change
    calls: tuple[CallLine, ...] = ()  # from the line to change down to the ttnn call
    changed_on_disk: bool = False  # the finding's file was edited since the recording
    keep_going: str | None = None  # recorded with run --keep-going: the TT_FATAL it went past


def sort_findings(findings: list[Finding]) -> tuple[Finding, ...]:
    """Most severe first, then in the order the program hit them."""
    return tuple(
        sorted(findings, key=lambda f: (-f.severity.rank, f.events[0] if f.events else 0))
    )


def current_findings(session: Session) -> list[Finding] | None:
    """The stored findings while current (`findings_for`'s stamp rule), else None: never
    checked, checked by another analysis version, stored without a stamp, or the session
    changed since. Nothing is analysed here (the screen does that in a worker)."""
    from ttrecord.analysis.check import findings_for

    stored = findings_for(session, store=False, compute=False)
    return stored.findings if stored is not None else None


def can_analyse(session: Session, events: int) -> bool:
    """Findings are computed on open only for a finished session small enough to analyse while
    the user waits."""
    if events > ANALYSE_ON_OPEN_MAX_EVENTS:
        return False
    if session.info().status == str(SessionStatus.RUNNING):
        return False
    return importlib.util.find_spec("ttrecord.analysis") is not None


def analyse(session: Session) -> tuple[Finding, ...]:
    """The session's findings as `ttrecord check` finds them (`findings_for`; a viewer stores
    nothing)."""
    from ttrecord.analysis.check import findings_for

    return sort_findings(findings_for(session, store=False).findings)


def describe_call(session: Session, seq: int | None) -> str | None:
    if seq is None:
        return None
    rows = session.timeline(EventFilter(seqs=frozenset({seq})), limit=1)
    if not rows:
        return f"#{seq}"
    row = rows[0]
    where = f" at {Path(row.file).name}:{row.line}" if row.file else ""
    return f"{row.name}{where} (#{row.seq})"


def summarize(path: Path) -> SessionSummary:
    """Open one session just long enough to describe it; never raises for a bad file."""
    try:
        with Session.open(path) as session:
            info = session.info()
            severities = Counter(str(f.severity) for f in current_findings(session) or ())
            died = None
            if info.status in ("crashed", "hung", "error"):
                died = describe_call(session, info.last_call) or info.error_message
            return cast(SessionSummary, clean_deep(SessionSummary(path, info, session.event_count(), dict(severities),
                                             died)))  # fmt: skip
    except SessionError as exc:
        return SessionSummary(path, error=clean(str(exc), 500))
    except Exception as exc:  # damaged in a way the reader did not foresee: still one row
        return SessionSummary(path, error=clean(f"{path}: cannot be read ({exc})", 500))


def overview(session: Session) -> OverviewData:
    info = session.info()
    current = current_findings(session)
    phases = session.phase_counts()
    total = sum(phases.values())
    notices = []
    if info.status == str(SessionStatus.RUNNING):
        notices.append("This session is still being recorded: what you see may be incomplete.")
    stopped = session.abnormal or (info.options or {}).get("recording_stopped")
    if stopped:
        notices.append(f"Partial recording: {stopped}.")
    if info.status in ("crashed", "hung") and not session.abnormal:
        died = describe_call(session, info.last_call)
        notices.append(f"The program {info.status} during {died or 'an unknown call'}.")
    if info.error_message and info.status == "error":
        notices.append(f"The program raised {info.error_type or 'an error'}: {info.error_message}")
    from ttrecord.report.outcome import of_session

    empty = of_session(session)  # no backend, no ttnn call, no capture: said, never "clean"
    if empty is not None:
        notices.append(f"Nothing to judge: {empty.why}")
    return OverviewData(
        info=info,
        events=total,
        phases=phases,
        devices=tuple(session.devices()),
        traces=tuple(session.traces()),
        findings=sort_findings(current or []),
        notices=tuple(notices),
        needs_analysis=current is None and can_analyse(session, total),
        unchecked=current is None and total > ANALYSE_ON_OPEN_MAX_EVENTS,
    )


def source_excerpt(session: Session, file: str | None, line: int | None) -> tuple[SourceExcerpt | None, str | None]:
    if not file or line is None:
        return None, "This finding is not tied to a line of source."
    text = session.source(file)
    if text is None:
        return None, f"Source not available: {file} is not on this machine and no copy was stored."
    n_lines = text.count("\n") + 1
    first = max(1, line - SOURCE_CONTEXT)
    last = min(n_lines, line + SOURCE_CONTEXT)
    if line > n_lines:
        return None, f"{file} has {n_lines} lines now; line {line} is gone (the file changed)."
    return SourceExcerpt(file, text, line, first, last), None


def finding_data(session: Session, finding: Finding) -> FindingData:
    from ttrecord.report.lead import capture_sites, change_index
    from ttrecord.report.text import chain

    steps = chain(finding, change_index(finding, capture_sites(session, [finding])))
    change = steps[0][1]
    calls = []
    for lead, (file, line, function) in steps[1:]:
        text = session.source(file) if file else None
        lines = text.splitlines() if text is not None else []
        code = lines[line - 1].strip() if line and 0 < line <= len(lines) else None
        calls.append(CallLine(lead.strip(), file, line, function, code))
    source, note = source_excerpt(session, change[0], change[1])
    changed = any(session.source_changed_on_disk(file)
                  for file in {finding.file, change[0]} if file)  # fmt: skip
    related: tuple[TimelineRow, ...] = ()
    if finding.events:
        rows = session.timeline(EventFilter(seqs=frozenset(finding.events)), limit=len(finding.events))
        order = {seq: i for i, seq in enumerate(finding.events)}
        related = tuple(sorted(rows, key=lambda r: order.get(r.seq, 0)))
    from ttrecord.report.keep_going import messages

    went = messages(session, [finding])[0]
    return FindingData(finding, source, note, related, change, tuple(calls), changed, went)
