"""A progress bar for long commands (check, report, export, diff), for people watching them.

Shown on standard error, only when standard error is a terminal, only once the work has taken
longer than DELAY_S (a quick command never flashes a bar), and removed when the work ends, so
the command's own output is all that remains; nothing at all with --quiet or when stderr is
piped or redirected. The bar is drawn by rich from a timer thread; the work only calls
`step()` and `advance()`, which cost a lock and an addition.
"""

from __future__ import annotations

import os
import sys
import threading
from typing import Any, TextIO

# Seconds of work before the bar appears. TTRECORD_PROGRESS_DELAY overrides it (tests use 0).
DELAY_S = 1.0


def _delay() -> float:
    try:
        return float(os.environ.get("TTRECORD_PROGRESS_DELAY", DELAY_S))
    except ValueError:
        return DELAY_S


class Progress:
    """`with Progress("checking", total=8, quiet=args.quiet) as bar: bar.step("TR004")…`

    `total` counts steps or rows; None draws a bar without an end (a pulse)."""

    def __init__(self, description: str, total: float | None = None, quiet: bool = False,
                 stream: TextIO | None = None) -> None:  # fmt: skip
        self._stream = stream if stream is not None else sys.stderr
        self._description = description
        self._total = total
        self._completed = 0.0
        self._lock = threading.Lock()
        self._bar: Any = None  # rich.progress.Progress once shown
        self._task: Any = None
        self._timer: threading.Timer | None = None
        self._done = False
        self._stepped = False
        isatty = getattr(self._stream, "isatty", None)
        self.enabled = not quiet and bool(isatty and isatty())

    def __enter__(self) -> Progress:
        if self.enabled:
            delay = _delay()
            if delay <= 0:
                self._show()
            else:
                self._timer = threading.Timer(delay, self._show)
                self._timer.daemon = True
                self._timer.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Remove the bar (if shown) before the command writes its output."""
        with self._lock:
            self._done = True
            if self._timer is not None:
                self._timer.cancel()
            if self._bar is not None:
                self._bar.stop()
                self._bar = None

    def step(self, description: str) -> None:
        """Starting the next step (`description`); the previous one, if any, counts as done."""
        with self._lock:
            self._completed += 1 if self._stepped else 0
            self._stepped = True
            self._description = description
            if self._bar is not None:
                self._bar.update(self._task, completed=self._completed, description=description)

    def set_total(self, total: float | None) -> None:
        with self._lock:
            self._total = total
            if self._bar is not None:
                self._bar.update(self._task, total=total)

    def advance(self, amount: float = 1) -> None:
        with self._lock:
            self._completed += amount
            if self._bar is not None:
                self._bar.update(self._task, completed=self._completed)

    def _show(self) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, Progress as Bar, TaskProgressColumn, TextColumn
        from rich.progress import TimeElapsedColumn

        with self._lock:
            if self._done:
                return
            console = Console(file=self._stream, highlight=False)
            bar = Bar(TextColumn("{task.description}", markup=False), BarColumn(),
                      TaskProgressColumn(), TimeElapsedColumn(), console=console,
                      transient=True, redirect_stdout=False, redirect_stderr=False)  # fmt: skip
            total = self._total
            self._task = bar.add_task(self._description, total=total,
                                      completed=min(self._completed, total or self._completed))  # type: ignore[arg-type]  # fmt: skip (rich keeps a float)
            bar.start()
            self._bar = bar
