"""`ttrecord tui`: the Textual UI (imported only inside run, so the CLI stays light)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ttrecord.errors import TtrecordError


class Tui:
    """Browse sessions in a terminal UI: findings with their source line, timeline, memory map.

    With no arguments, lists the sessions in the current folder. Give session files to open
    them (one file opens straight to its overview), or folders to list the sessions inside.
    Press ? in the UI for its keys.
    """

    @staticmethod
    def prepare_parser(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("sessions", nargs="*", metavar="SESSION",
                            help="session files (.db) or folders holding them")  # fmt: skip
        parser.add_argument("--light", action="store_true", help="start with the light theme")

    def run(self, args: argparse.Namespace) -> int:
        missing = [p for p in args.sessions if not Path(p).exists()]
        if missing:  # unreadable sessions are shown in the UI; absent ones are a typo
            raise TtrecordError(f"{missing[0]}: no such file or folder")
        if not _on_terminal(sys.stdout):  # Textual would write escape codes into a pipe and wait
            raise TtrecordError("standard output is not a terminal; the UI needs one"
                                " (for text use `ttrecord report` or `ttrecord check`)")  # fmt: skip
        from ttrecord.tui.app import DARK, LIGHT, TtrecordApp

        app = TtrecordApp(args.sessions, theme=LIGHT if args.light else DARK)
        app.run()
        errors = app.unreadable()
        if errors:  # shown in the UI; said once more here, and the exit status says it too
            from ttrecord.textsafe import clean

            print(f"ttrecord tui: {clean(errors[0], 500)}", file=sys.stderr)
            return 2
        return app.return_code or 0


def _on_terminal(stream: object) -> bool:
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty and isatty())
    except ValueError:  # a closed stream
        return False
