"""Output for `ttrecord check` and `ttrecord report`: one module per format.

A format is a function `render(result: CheckResult, out: TextIO) -> None` registered in
FORMATS, so a new output format is one new module and one line. `run_check` is the one entry
point the `check` command and `run --check` share: analyze and store the findings
(`analysis.check.check_session`), render, and turn the worst severity into an exit code.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TextIO

from ttrecord.findings import Finding, Severity

if TYPE_CHECKING:
    from ttrecord.analysis.check import CheckResult as CheckResult


def __getattr__(name: str) -> Any:
    """`CheckResult` and `check_session`, re-exported from `analysis.check` (the analysis runs
    and stores findings; this package only renders them), imported when first asked for:
    importing the analysis loads every detector, which `--help` need not wait for."""
    if name in ("CheckResult", "check_session"):
        from ttrecord.analysis import check

        return getattr(check, name)
    raise AttributeError(name)


def _formats() -> dict[str, Callable[[CheckResult, TextIO], None]]:
    from ttrecord.report import jsonfmt, sarif, text

    return {"text": text.render, "json": jsonfmt.render, "sarif": sarif.render}


FAIL_ON = ("error", "warning", "info", "never")  # the same choices as the pytest plugin


def fails(findings: list[Finding], fail_on: str) -> bool:
    """Whether any finding reaches the fail level (FAIL_ON: 'never' fails nothing)."""
    if fail_on == "never":
        return False
    level = Severity(fail_on).rank
    return any(f.severity.rank >= level for f in findings)


INCOMPLETE_EXIT = 3  # `ttrecord check` of a run that did not finish (docs/check.md)


def exit_code(findings: list[Finding], fail_on: str, empty: Any, finished: bool, *,
              allow_empty: bool, allow_incomplete: bool) -> int:  # fmt: skip
    """`check`'s exit status: 1 when a finding reaches the fail level, else 4 when there was
    nothing to judge (`outcome.Empty`), and 3 for a run that did not finish."""
    from ttrecord.report.outcome import EMPTY_EXIT

    code = 1 if fails(findings, fail_on) else 0
    if code == 0 and empty is not None and not allow_empty and (empty.before_any_call or finished):
        code = EMPTY_EXIT
    if not finished and not allow_incomplete:
        code = code or INCOMPLETE_EXIT
    return code


def run_check(
    path: str, fmt: str = "text", fail_on: str = "error", out: TextIO | None = None,
    quiet: bool = False, allow_incomplete: bool = False, allow_empty: bool = False,
    baseline: str | None = None,
) -> int:
    """`ttrecord check`: 1 when a finding reaches `fail_on` (with a baseline: a new finding);
    4 when there was nothing to judge (no backend, no ttnn call, no capture), unless
    `allow_empty`; 3 when the run did not finish (its findings cover only what was recorded),
    unless `allow_incomplete`; else 0 (SessionError propagates). A run that stopped before it
    recorded any call is nothing to judge; one that stopped after eager calls is incomplete
    (a capture may have come later). A progress bar shows on a terminal's stderr while a long
    analysis runs (not with quiet)."""
    from ttrecord.analysis import STEPS
    from ttrecord.progress import Progress

    from ttrecord.analysis.check import check_session
    from ttrecord.report import baseline as baselines
    from ttrecord.report import keep_going
    from ttrecord.report.lead import change_indexes
    from ttrecord.report.patches import suggest_all
    from ttrecord.report.outcome import of_session
    from ttrecord.report.result import Extras, Reported
    from ttrecord.store.reader import Session

    old = baselines.load(baseline) if baseline is not None else None  # bad input before work
    with Progress("checking", total=STEPS, quiet=quiet) as bar:
        result = check_session(path, on_step=bar.step)
    with Session.open(path) as session:
        extras = Extras(empty=of_session(session), changed_on_disk=sorted(
            {f.file for f in result.findings if f.file and session.source_changed_on_disk(f.file)}),
            change=change_indexes(session, result.findings),
            keep_going=keep_going.messages(session, result.findings),
            patches=suggest_all(session, result.findings))  # fmt: skip
    if old is not None and baseline is not None:
        extras.baseline = baselines.compare(result, baseline, old)
    judged = result.findings
    if extras.baseline is not None:
        judged = [f for f, s in zip(result.findings, extras.baseline.state, strict=True) if s == "new"]
    code = exit_code(judged, fail_on, extras.empty, result.finished,
                     allow_empty=allow_empty, allow_incomplete=allow_incomplete)  # fmt: skip
    out = out or sys.stdout
    try:
        _formats()[fmt](Reported.of(result, extras), out)
        out.flush()
    except BrokenPipeError:  # `ttrecord check … | head`: the reader left, the verdict stands
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, out.fileno())
    return code
