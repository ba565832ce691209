"""`ttrecord tui`: the Textual UI (imported only inside run, so the CLI stays light)."""

from __future__ import annotations

import argparse
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
        from ttrecord.tui.app import DARK, LIGHT, TtrecordApp

        TtrecordApp(args.sessions, theme=LIGHT if args.light else DARK).run()
        return 0
