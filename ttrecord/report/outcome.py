"""Nothing to judge: a session the trace rules cannot pass, because there was nothing to check.

"No trace hazards found" is a claim about captures. A run where no backend loaded, no ttnn
call was recorded (a script that never imports ttnn, a syntax error) or nothing was captured
(an eager-only program) has none, and a CI gate must not turn that into a green check, as
coverage.py says "No data was collected" instead of 100%. `check` exits EMPTY_EXIT for it
unless `--allow-empty`; `report` and the pytest plugin say it in the same one line.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ttrecord.events import CALL_KINDS, Kind

if TYPE_CHECKING:
    from ttrecord.store.reader import Session

EMPTY_EXIT = 4  # `ttrecord check`: nothing to judge (README's exit codes)

BACKENDS = ("ttnn", "emulator")  # what a session that loaded one names; anything else: none


@dataclass(frozen=True)
class Empty:
    """Why a session gives the trace rules nothing to judge: `why` in one line."""

    kind: str  # "no_backend" | "no_calls" | "no_capture"
    why: str

    @property
    def before_any_call(self) -> bool:
        """Nothing was recorded at all (the eager-only case recorded calls, just no capture)."""
        return self.kind != "no_capture"


def describe(backend: str | None, backend_reason: str | None, calls: int, captures: int,
             regions: int) -> Empty | None:  # fmt: skip
    """The one line for a run that gave nothing to judge; None when something was judged.
    `calls`: recorded ttnn calls; `captures`: trace captures begun; `regions`: audit
    regions entered (an eager run audited with --audit-region is judged)."""
    if backend not in BACKENDS:
        reason = f" ({backend_reason})" if backend_reason else ""
        return Empty("no_backend", f"No backend ran{reason}: nothing to judge.")
    if calls == 0:
        return Empty("no_calls", "No ttnn call was recorded (the program never reached ttnn):"
                     " nothing to judge.")  # fmt: skip
    if captures == 0 and regions == 0:
        return Empty("no_capture", "No trace was captured (an eager-only run): nothing to judge;"
                     " only `ttrecord run --audit-region QUALNAME` can judge an eager program.")  # fmt: skip
    return None


_CALL_KINDS = tuple(sorted(str(k) for k in CALL_KINDS))


def of_session(session: Session) -> Empty | None:
    """`describe` for an open session: three indexed look-ups, not a scan of the events."""
    from ttrecord.store.finding_rows import has_kind

    info = session.info()
    return describe(info.backend, info.backend_reason, int(has_kind(session, _CALL_KINDS)),
                    int(has_kind(session, (str(Kind.TRACE_BEGIN),))),
                    int(has_kind(session, (str(Kind.REGION_BEGIN),))))  # fmt: skip

