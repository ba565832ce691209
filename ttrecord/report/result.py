"""What `check` renders besides the findings: whether there was anything to judge, which
source files changed on disk since the recording, and how the findings compare with a baseline.

The analysis' CheckResult stays what it is (findings of one session); `run_check` wraps it in
`Reported` with these, and every format asks `extras(result)`, so a plain CheckResult (as the
format tests build) renders as before.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING

from ttrecord.analysis.check import CheckResult

if TYPE_CHECKING:
    from ttrecord.report.baseline import Comparison
    from ttrecord.report.outcome import Empty
    from ttrecord.report.patches import Patch


@dataclass
class Extras:
    empty: Empty | None = None  # nothing to judge, and why (one line)
    changed_on_disk: list[str] = field(default_factory=list)  # files edited since the recording
    baseline: Comparison | None = None  # fixed / still there / new against an older check
    change: list[int] | None = None  # per finding, its line to change (report.lead)
    keep_going: list[str | None] | None = None  # per finding, the TT_FATAL it went past
    patches: list[Patch | None] | None = None  # per finding, its mechanical fix (report.patches)


@dataclass
class Reported(CheckResult):
    extras: Extras = field(default_factory=Extras)

    @classmethod
    def of(cls, result: CheckResult, extras: Extras) -> Reported:
        return cls(**{f.name: getattr(result, f.name) for f in fields(CheckResult)}, extras=extras)


def extras(result: CheckResult) -> Extras:
    return result.extras if isinstance(result, Reported) else Extras()


def changed_line(files: list[str]) -> str:
    """The one line that says the shown source is the recorded one, not today's file."""
    names = ", ".join(files[:3]) + (f" and {len(files) - 3} more" if len(files) > 3 else "")
    return (f"Changed on disk since the recording: {names}; the source lines shown are the"
            " ones that ran (stored in the session).")
