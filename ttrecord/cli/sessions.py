"""`ttrecord sessions`: list the session files in a folder."""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import TYPE_CHECKING

from ttrecord.errors import TtrecordError

if TYPE_CHECKING:
    from ttrecord.store.reader import Session

STATUS_STYLES = {
    "ok": "green",
    "running": "cyan",
    "error": "red",
    "crashed": "bold red",
    "hung": "magenta",
    "interrupted": "yellow",
}


_ANALYZE_UP_TO = 200_000  # events: sessions never checked are analyzed on the spot up to this


def _findings(session: Session, events: int) -> str:
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
    Files that are not ttrecord sessions are skipped; a damaged session is listed as such
    (and the command exits 2) without hiding the others.
    """

    @staticmethod
    def prepare_parser(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("folder", nargs="?", default=".", metavar="DIR",
                            help="folder to look in (default: current folder)")  # fmt: skip

    def run(self, args: argparse.Namespace) -> int:
        from rich.table import Table
        from rich.text import Text

        from ttrecord import textsafe

        from ttrecord.errors import SessionError
        from ttrecord.store.damage import DAMAGE
        from ttrecord.store.reader import Session, find_sessions

        folder = Path(args.folder)
        if not folder.is_dir():
            raise TtrecordError(f"{folder}: no such folder")
        paths = find_sessions(folder)
        console = textsafe.console()  # session text is data, never markup or escapes
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
        damaged = 0
        for path in paths:
            try:
                with Session.open(path) as session:
                    info = session.info()
                    events = session.event_count()
                    findings = _findings(session, events)
                    abnormal = session.abnormal is not None
                    started = time.strftime("%m-%d %H:%M", time.localtime(info.started_at))
                    script = str(info.script)
                    program = script if script.startswith("-m ") else Path(script).name
            except (SessionError,) + DAMAGE as exc:  # one bad file does not hide the others
                damaged += 1
                reason = str(exc).removeprefix(f"{path}: ")
                table.add_row(textsafe.clean(path.name),
                              Text(textsafe.clean(f"cannot be read: {reason}"), style="red"), "",
                              Text("damaged", style="bold red"), "", "", "")  # fmt: skip
                continue
            status = Text(str(info.status), style=STATUS_STYLES.get(info.status, ""))
            if abnormal:  # left `running` by a recorder that is gone
                status.append(" (recording stopped abnormally)")
            clean = textsafe.clean
            table.add_row(clean(path.name), clean(program), started, status, clean(info.backend),
                          str(events), findings)  # fmt: skip
        console.print(table)
        return 2 if damaged else 0
