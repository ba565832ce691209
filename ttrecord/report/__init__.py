"""Output for `ttrecord check` and `ttrecord report`: one module per format.

A format is a function `render(result: CheckResult, out: TextIO) -> None` registered in
FORMATS, so a new output format is one new module and one line. `run_check` is the one entry
point the `check` command and `run --check` share: analyze, store the findings in the session
for viewers, render, and turn the worst severity into an exit code.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TextIO

from ttrecord.findings import Finding, Severity


@dataclass
class CheckResult:
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

    def summary(self) -> dict:
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


def _formats() -> dict[str, Callable[[CheckResult, TextIO], None]]:
    from ttrecord.report import jsonfmt, sarif, text

    return {"text": text.render, "json": jsonfmt.render, "sarif": sarif.render}


FORMAT_NAMES = ("text", "json", "sarif")
FAIL_ON = ("error", "warning", "info", "never")  # the same choices as the pytest plugin


def fails(findings: list[Finding], fail_on: str) -> bool:
    """Whether any finding reaches the fail level (FAIL_ON: 'never' fails nothing)."""
    if fail_on == "never":
        return False
    level = Severity(fail_on).rank
    return any(f.severity.rank >= level for f in findings)


def check_session(path: str, store: bool = True, on_step: Callable[[str], None] | None = None) -> CheckResult:
    """Analyze a session file and (by default) store its findings for viewers, stamped with
    the analysis version and the session's fingerprint (`ttrecord report` and the UI reuse
    them while both still match)."""
    from ttrecord.analysis import analyze
    from ttrecord.analysis.version import analysis_version
    from ttrecord.store.reader import Session

    with Session.open(path) as session:
        info = session.info()
        stamp = (analysis_version(), session.fingerprint())
        stopped = session.abnormal or (info.options or {}).get("recording_stopped")
        findings = analyze(session, on_step)
        events = session.event_count()
        texts: dict[str, str | None] = {}

        def source(file: str) -> str | None:
            if file not in texts:
                texts[file] = session.source(file)
            return texts[file]

        for f in findings:  # read sources now: the session closes when this block ends
            if f.file:
                source(f.file)
    if store:
        store_findings(path, findings, stamp)
    return CheckResult(
        path=str(path), session_id=info.id, script=info.script, backend=info.backend,
        status=info.status, cwd=info.cwd, events=events, findings=findings,
        sources=lambda file: texts.get(file), recording_stopped=stopped,
    )  # fmt: skip


def store_findings(path: str, findings: list[Finding], stamp: tuple[str, str] | None = None,
                   say_why: bool = True) -> bool:  # fmt: skip
    """Store findings for viewers; False (and, with say_why, one line on stderr) when the file
    cannot be written: a read-only copy or a locked file, where the report still stands."""
    import sqlite3

    from ttrecord.store.writer import replace_findings

    try:
        replace_findings(path, findings, stamp)
    except sqlite3.Error as exc:
        if say_why:
            print(f"ttrecord check: findings not stored in {path} ({exc})", file=sys.stderr)
        return False
    return True


INCOMPLETE_EXIT = 3  # `ttrecord check` of a run that did not finish (docs/check.md)


def run_check(
    path: str, fmt: str = "text", fail_on: str = "error", out: TextIO | None = None,
    quiet: bool = False, allow_incomplete: bool = False,
) -> int:
    """`ttrecord check`: 1 when a finding reaches `fail_on`; 3 when the run did not finish
    (its findings cover only what was recorded), unless `allow_incomplete`; else 0
    (SessionError propagates). A progress bar shows on a terminal's stderr while a long
    analysis runs (not with quiet)."""
    from ttrecord.analysis import STEPS
    from ttrecord.progress import Progress

    with Progress("checking", total=STEPS, quiet=quiet) as bar:
        result = check_session(path, on_step=bar.step)
    code = 1 if fails(result.findings, fail_on) else 0
    if not result.finished and not allow_incomplete:
        code = code or INCOMPLETE_EXIT
    out = out or sys.stdout
    try:
        _formats()[fmt](result, out)
        out.flush()
    except BrokenPipeError:  # `ttrecord check … | head`: the reader left, the verdict stands
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, out.fileno())
    return code
