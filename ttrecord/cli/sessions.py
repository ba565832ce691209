"""`ttrecord sessions`: list the session files in a folder."""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from ttrecord.errors import TtrecordError

STATUS_STYLES = {
    "ok": "green",
    "running": "cyan",
    "error": "red",
    "crashed": "bold red",
    "hung": "magenta",
    "interrupted": "yellow",
}


_ANALYZE_UP_TO = 200_000  # events: sessions never checked are analyzed on the spot up to this


def _findings(session, events: int) -> str:
    """Stored findings; for a session never checked (nothing stored), the findings computed now
    when the session is small enough, else "not checked". Nothing is stored here."""
    stored = session.findings()
    if stored:
        return str(len(stored))
    if events > _ANALYZE_UP_TO:
        return "not checked"
    from ttrecord.analysis import analyze

    try:
        return str(len(analyze(session)))
    except Exception:  # a damaged session: listing the folder must go on
        return "not checked"


class Sessions:
    """List ttrecord sessions in a folder (default: the current one), newest first.

    Shows each session's program, start time, status, backend, event count and findings
    (computed on the spot for a small session never checked, else "not checked").
    Files that are not ttrecord sessions are skipped.
    """

    @staticmethod
    def prepare_parser(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("folder", nargs="?", default=".", metavar="DIR",
                            help="folder to look in (default: current folder)")  # fmt: skip

    def run(self, args: argparse.Namespace) -> int:
        from rich.console import Console
        from rich.table import Table

        from ttrecord.errors import SessionError
        from ttrecord.store.reader import Session, find_sessions

        folder = Path(args.folder)
        if not folder.is_dir():
            raise TtrecordError(f"{folder}: no such folder")
        paths = find_sessions(folder)
        console = Console()
        if not paths:
            console.print(f"No ttrecord sessions in {folder}.")
            return 0
        table = Table(title=f"ttrecord sessions in {folder}")
        table.add_column("session", overflow="fold")
        table.add_column("program", overflow="fold")
        table.add_column("started", no_wrap=True)
        for column in ("status", "backend"):
            table.add_column(column, no_wrap=True)
        for column in ("events", "findings"):
            table.add_column(column, justify="right")
        for path in paths:
            try:
                with Session.open(path) as session:
                    info = session.info()
                    events = session.event_count()
                    findings = _findings(session, events)
            except SessionError:
                continue
            started = time.strftime("%m-%d %H:%M", time.localtime(info.started_at))
            program = info.script if info.script.startswith("-m ") else Path(info.script).name
            style = STATUS_STYLES.get(info.status, "")
            status = f"[{style}]{info.status}[/]" if style else info.status
            table.add_row(path.name, program, started, status, info.backend, str(events),
                          findings)  # fmt: skip
        console.print(table)
        return 0
