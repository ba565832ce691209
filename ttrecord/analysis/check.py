""""What are this session's findings?" answered once: `findings_for`, the one path `check`,
`report` (terminal and HTML), `run --check`, the UI, every exporter and the pytest plugin take.

Stored findings carry a stamp (the analysis version and the session's fingerprint) and, with
them, the run summary `report` draws (`run_summary`). The stamp rule: stored findings are
reused only while their stamp matches this analysis and this very content; otherwise (never
checked, checked by another version, the session changed since, or stored without a stamp)
they are computed anew, the same way `check` computes them, and stored when asked.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, overload

from ttrecord.analysis import analyze_session
from ttrecord.analysis.run_summary import RunSummary, summarize
from ttrecord.analysis.version import analysis_version
from ttrecord.events import SessionStatus
from ttrecord.findings import Finding, Severity

if TYPE_CHECKING:
    from ttrecord.analysis.context import Context
    from ttrecord.store.reader import Session

Stamp = tuple[str, str]  # (analysis version, session fingerprint)


@dataclass
class CheckResult:
    """What `ttrecord check` renders: the session's identity and its findings."""

    path: str
    session_id: str
    script: str
    backend: str
    status: str
    cwd: str | None
    events: int
    findings: list[Finding]
    sources: Callable[[str], str | None] = field(default=lambda _file: None, repr=False)
    recording_stopped: str | None = None  # the session holds only part of the run, and why

    @property
    def finished(self) -> bool:
        """The recorded program ran to its end (a crash, error, hang or interrupt leaves
        findings that cover only what happened before it stopped)."""
        return self.status == "ok"

    def summary(self) -> dict[str, Any]:
        by_severity = {str(s): 0 for s in Severity}
        by_rule: dict[str, int] = {}
        for f in self.findings:
            by_severity[str(f.severity)] += 1
            by_rule[f.rule] = by_rule.get(f.rule, 0) + 1
        return {
            "total": len(self.findings),
            "by_severity": by_severity,
            "by_rule": dict(sorted(by_rule.items())),
            "events": self.events,
        }

    def source_line(self, file: str | None, line: int | None) -> str | None:
        if not file or not line:
            return None
        text = self.sources(file)
        if text is None:
            return None
        lines = text.splitlines()
        return lines[line - 1] if 0 < line <= len(lines) else None


def stamp_of(session: Session) -> Stamp:
    """The stamp findings computed now on this session are stored with."""
    return (analysis_version(), session.fingerprint())


def stamp_is_current(session: Session) -> bool | None:
    """Whether the stored findings were computed by this analysis on this very content; None
    when they carry no stamp (stored by hand or by an older ttrecord)."""
    stamp = session.findings_stamp()
    if stamp is None:
        return None
    return stamp == stamp_of(session)


@dataclass
class SessionFindings:
    """A session's findings as `findings_for` answers them, with what they came from."""

    session: Session
    findings: list[Finding]
    computed: bool  # analysed now (False: the stored findings were current)
    _context: Context | None = field(default=None, repr=False)
    _summary: RunSummary | None = field(default=None, repr=False)

    def context(self) -> Context:
        """The loaded events and facts the findings were derived from (loaded now when the
        findings were reused)."""
        if self._context is None:
            from ttrecord.analysis import load_context

            self._context = load_context(self.session)
        return self._context

    def summary(self) -> RunSummary:
        """The run summary `report` draws: stored with current findings, else derived now."""
        if self._summary is None:
            stored = self.session.stored_summary()
            self._summary = (RunSummary.from_json(stored) if stored is not None
                             else summarize(self.session, self.context()))  # fmt: skip
        return self._summary


@overload
def findings_for(session: Session, *, store: bool, on_step: Callable[[str], None] | None = None,
                 compute: Literal[True] = True, say_why: bool = False) -> SessionFindings: ...  # fmt: skip
@overload
def findings_for(session: Session, *, store: bool, on_step: Callable[[str], None] | None = None,
                 compute: bool, say_why: bool = False) -> SessionFindings | None: ...  # fmt: skip
def findings_for(session: Session, *, store: bool, on_step: Callable[[str], None] | None = None,
                 compute: bool = True, say_why: bool = False) -> SessionFindings | None:  # fmt: skip
    """This session's findings: the stored ones while their stamp is current, else computed now
    (and, with `store`, stored stamped for the next reader; never for a session still being
    recorded, which changes anyway). With `compute=False`, None instead of analysing (a viewer
    that analyses later, or not at all for a large session). `say_why`: one line on stderr
    when the file cannot be written."""
    if stamp_is_current(session):
        return SessionFindings(session, session.findings(), computed=False)
    if not compute:
        return None
    stamp = stamp_of(session)
    findings, ctx = analyze_session(session, on_step)
    summary = summarize(session, ctx)
    if store and session.info().status != SessionStatus.RUNNING:
        _store(session, findings, stamp, summary, say_why=say_why)
    return SessionFindings(session, findings, computed=True, _context=ctx, _summary=summary)


def _store(session: Session, findings: list[Finding], stamp: Stamp | None,
          summary: RunSummary | None = None, say_why: bool = True) -> bool:  # fmt: skip
    """Store findings (and the run summary) for viewers; False (and, with say_why, one line on
    stderr) when the file cannot be written: a read-only copy or a locked file, where the
    analysis still stands."""
    from ttrecord.errors import SessionError
    from ttrecord.store.writer import replace_findings

    try:
        replace_findings(session.path, findings, stamp,
                         summary.to_json() if summary is not None else None)  # fmt: skip
    except SessionError as exc:
        if say_why:
            print(f"ttrecord check: findings not stored in {session.path} ({exc})", file=sys.stderr)
        return False
    return True


def check_session(path: str, store: bool = True,
                  on_step: Callable[[str], None] | None = None) -> CheckResult:  # fmt: skip
    """A session file's findings (`findings_for`), by default stored for viewers."""
    from ttrecord.store.reader import Session

    with Session.open(path) as session:
        info = session.info()
        stopped = session.abnormal or (info.options or {}).get("recording_stopped")
        result = findings_for(session, store=store, on_step=on_step, say_why=True)
        findings, summary = result.findings, result.summary()
        texts: dict[str, str | None] = {}
        for f in findings:  # read sources now: the session closes when this block ends
            if f.file and f.file not in texts:
                texts[f.file] = session.source(f.file)
    return CheckResult(
        path=str(path), session_id=info.id, script=info.script, backend=info.backend,
        status=info.status, cwd=info.cwd, events=summary.events, findings=findings,
        sources=lambda file: texts.get(file), recording_stopped=stopped,
    )  # fmt: skip
