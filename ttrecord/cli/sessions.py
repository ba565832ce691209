"""`ttrecord sessions`: list the session files in a folder."""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

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


def _findings(session: Session, events: int) -> int | None:
    """Stored findings; for a session never checked (nothing stored), the findings computed now
    when the session is small enough, else None ("not checked"). Nothing is stored here."""
    stored = session.findings()
    if stored:
        return len(stored)
    if events > _ANALYZE_UP_TO:
        return None
    from ttrecord.analysis import analyze

    try:
        return len(analyze(session))
    except Exception:  # a damaged session: listing the folder must go on
        return None


JSON_VERSION = 1  # docs/sessions-json.schema.json; bump on an incompatible change


def listing(folder: Path) -> list[dict[str, Any]]:
    """One dict per session file in `folder`, newest first (the `--format json` rows)."""
    from ttrecord.errors import SessionError
    from ttrecord.store.damage import DAMAGE
    from ttrecord.store.reader import Session, find_sessions

    rows: list[dict[str, Any]] = []
    for path in find_sessions(folder):
        try:
            with Session.open(path, snapshot=False) as session:
                info = session.info()
                events = session.event_count()
                rows.append({
                    "path": str(path), "name": path.name, "script": str(info.script),
                    "started_at": info.started_at, "status": info.status,
                    "stopped_abnormally": session.abnormal is not None,
                    "backend": info.backend, "events": events,
                    "findings": _findings(session, events), "error": None,
                })  # fmt: skip
        except (SessionError, *DAMAGE) as exc:  # type: ignore[misc]  # DAMAGE is a tuple of exception types  # one bad file does not hide the others
            reason = str(exc).removeprefix(f"{path}: ")
            rows.append({"path": str(path), "name": path.name, "script": None,
                         "started_at": None, "status": "damaged", "stopped_abnormally": False,
                         "backend": None, "events": None, "findings": None,
                         "error": f"cannot be read: {reason}"})  # fmt: skip
    return rows


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
        parser.add_argument("--format", choices=("text", "json"), default="text",
                            help="output format (default: text; json is documented in"
                            " docs/sessions-json.md)")  # fmt: skip

    def run(self, args: argparse.Namespace) -> int:
        import json
        import sys

        folder = Path(args.folder)
        if not folder.is_dir():
            raise TtrecordError(f"{folder}: no such folder")
        rows = listing(folder)
        damaged = sum(1 for r in rows if r["error"])
        if args.format == "json":
            json.dump({"version": JSON_VERSION, "folder": str(folder), "sessions": rows},
                      sys.stdout, indent=2)  # fmt: skip
            sys.stdout.write("\n")
        else:
            _print(folder, rows)
        return 2 if damaged else 0


def _started(when: Any) -> str:
    """The start time as the listing shows it; a damaged one is shown as such, never ends
    the listing."""
    if when is None:
        return ""
    try:
        return time.strftime("%m-%d %H:%M", time.localtime(when))
    except (OverflowError, ValueError, OSError, TypeError):
        return "(bad time)"


def _program(script: str | None) -> str:
    if not script:
        return ""
    return script if script.startswith("-m ") else Path(script).name


def _print(folder: Path, rows: list[dict[str, Any]]) -> None:
    """A table when it fits the width without folding names, else two lines per session."""
    from rich import box
    from rich.table import Table
    from rich.text import Text

    from ttrecord import textsafe
    from ttrecord.terminal import shorten_path

    console = textsafe.console()  # session text is data, never markup or escapes
    if not rows:
        console.print(f"No ttrecord sessions in {folder}.")
        return
    cells = []
    for r in rows:
        if r["error"]:
            status = Text("damaged", style="bold red")
            details = [Text(textsafe.clean(r["error"]), style="red")]
        else:
            status = Text(textsafe.clean(r["status"]), style=STATUS_STYLES.get(r["status"], ""))
            if r["stopped_abnormally"]:  # left `running` by a recorder that is gone
                status.append(" (recording stopped abnormally)")
            details = []
        started = _started(r["started_at"])
        found = "" if r["error"] else ("not checked" if r["findings"] is None else str(r["findings"]))
        events = f"{r['events']:,}" if r["events"] is not None else ""
        clean = textsafe.clean  # Text would drop some controls silently: show them escaped
        cells.append((clean(r["name"]), clean(_program(r["script"])), started, status,
                      clean(r["backend"] or ""), events, found, details))  # fmt: skip
    title = f"ttrecord sessions in {shorten_path(str(folder), console.width - 21)}"
    table = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, show_edge=False,
                  pad_edge=False)  # fmt: skip
    for column in ("session", "program", "started", "status", "backend"):
        table.add_column(column, no_wrap=True)
    for column in ("events", "findings"):
        table.add_column(column, justify="right", no_wrap=True)
    for name, program, started, status, backend, events, found, details in cells:
        table.add_row(name, details[0] if details else program, started, status, backend,
                      events, found)  # fmt: skip
    wide = console.options.update(width=100_000)  # unclamped: the width the table wants
    if console.measure(table, options=wide).maximum <= console.width:
        console.print(table)
        return
    console.print(Text(title, style="italic"))
    for name, program, started, status, backend, events, found, details in cells:
        console.print(Text(shorten_path(name, console.width), style="bold"))
        if details:
            line = Text.assemble("    ", status, " ", details[0])
        else:
            word = "finding" if found == "1" else "findings"
            line = Text.assemble("    ", program, "  ", started, "  ", status, "  ", backend,
                                 f"  {events} events  ",
                                 found if found == "not checked" else f"{found} {word}")  # fmt: skip
        console.print(line)
