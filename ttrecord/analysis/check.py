"""Analyze a session and store what was found: the one path `check`, `report`, `run --check`
and the pytest plugin share.

Stored findings carry a stamp (the analysis version and the session's fingerprint) and, with
them, the run summary `report` draws (`run_summary`): while the stamp matches, a report or the
UI reuses both instead of reading the session again. Computing them anew is `check_and_store`;
deciding whether what is stored is still current is `current_findings`.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ttrecord.analysis import analyze_session
from ttrecord.analysis.run_summary import RunSummary, summarize
from ttrecord.analysis.version import analysis_version
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


def current_findings(session: Session) -> list[Finding] | None:
    """The stored findings when current (their stamp matches), else None: stale, never
    checked, or stored without a stamp."""
    return session.findings() if stamp_is_current(session) else None


def current_summary(session: Session) -> tuple[list[Finding], RunSummary] | None:
    """Stored findings and the run summary stored with them, when both are current."""
    findings = current_findings(session)
    if findings is None:
        return None
    stored = session.stored_summary()
    return (findings, RunSummary.from_json(stored)) if stored is not None else None


def store(session: Session, findings: list[Finding], stamp: Stamp | None,
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


def check_and_store(session: Session, on_step: Callable[[str], None] | None = None, *,
                    save: bool = True, say_why: bool = True) -> tuple[list[Finding], Context, RunSummary]:  # fmt: skip
    """Analyze an open session and (with `save`) store its findings and run summary, stamped,
    for `report` and the UI to reuse."""
    stamp = stamp_of(session)
    findings, ctx = analyze_session(session, on_step)
    summary = summarize(session, ctx)
    if save:
        store(session, findings, stamp, summary, say_why=say_why)
    return findings, ctx, summary


def check_session(path: str, store: bool = True,
                  on_step: Callable[[str], None] | None = None) -> CheckResult:  # fmt: skip
    """Analyze a session file and (by default) store its findings for viewers."""
    from ttrecord.store.reader import Session

    with Session.open(path) as session:
        info = session.info()
        stopped = session.abnormal or (info.options or {}).get("recording_stopped")
        findings, _ctx, summary = check_and_store(session, on_step, save=store)
        texts: dict[str, str | None] = {}
        for f in findings:  # read sources now: the session closes when this block ends
            if f.file and f.file not in texts:
                texts[f.file] = session.source(f.file)
    return CheckResult(
        path=str(path), session_id=info.id, script=info.script, backend=info.backend,
        status=info.status, cwd=info.cwd, events=summary.events, findings=findings,
        sources=lambda file: texts.get(file), recording_stopped=stopped,
    )  # fmt: skip
