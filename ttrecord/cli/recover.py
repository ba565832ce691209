"""`ttrecord recover`: finish sessions whose `ttrecord run` was killed."""

from __future__ import annotations

import argparse
import sys


class Recover:
    """Finish a session left `running` by a `ttrecord run` that was killed (SIGKILL, OOM).

    ttrecord recover SESSION.db

    Replays the session's event log (SESSION.db.log, kept until the session is final) into
    the session, closes the calls that were running as died, and marks the session
    "recording stopped abnormally at event N". Every reader already says so for a session in
    that state; recovering makes the file final and self-contained. Exits 2 when the session
    is finished, being recorded, or cannot be read.
    """

    @staticmethod
    def prepare_parser(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("session", metavar="SESSION.db", help="a session left running")

    def run(self, args: argparse.Namespace) -> int:
        from ttrecord.recorder.recover import recover
        from ttrecord.terminal import wrap
        from ttrecord.textsafe import clean

        from ttrecord.recorder.recover import dropped_summary

        done = recover(args.session)
        if done.kept:
            source = "keeping what it held (its log holds less)"
        else:
            source = "from its log" if done.from_log else "without a log"
        line = (f"ttrecord: {clean(str(done.path))} recovered {source}: {done.status},"
                f" {done.events} events")  # fmt: skip
        if done.from_log:
            line += " recovered"
        if done.unreadable:
            line += f", {dropped_summary(done.unreadable)}"
        print(wrap(line, sys.stderr, keep=2), file=sys.stderr)
        return 0
