"""Following a session that is still being recorded.

The recorder writes the session in WAL mode and commits every batch, so a reader sees a
running program's events within a poll. A screen showing a `running` session re-reads what
it shows every POLL_SECONDS until the status changes (the run ended, failed, crashed or hung).

The analysis is the expensive part: it reads every event of interest. `AnalysisPacer` runs it
again only when events arrived, and no sooner than a few times its own last duration, so
following a long run costs a bounded share of a core. The UI keeps no per-event state of its
own (snapshots are replaced, timeline pages stay in their bounded cache), so its memory does
not grow with the run.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

POLL_SECONDS = 0.5
RUNNING = "running"


@dataclass
class AnalysisPacer:
    """Decides when a running session's analysis is worth running again."""

    min_interval: float = 1.0  # seconds between two analyses, at least
    share: float = 4.0  # ... and at least this many times the last one's duration
    clock: Callable[[], float] = field(default=time.monotonic, repr=False)
    _events: int = -1  # events the last analysis saw
    _next: float = 0.0  # earliest time for the next one
    running: bool = False

    def due(self, events: int) -> bool:
        """Events arrived since the last analysis, none is running, and the pause is over."""
        return not self.running and events != self._events and self.clock() >= self._next

    def started(self, events: int) -> float:
        self.running = True
        self._events = events
        return self.clock()

    def finished(self, started_at: float) -> None:
        now = self.clock()
        self.running = False
        self._next = now + max(self.min_interval, self.share * (now - started_at))
