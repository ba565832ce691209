"""`ttrecord report`: what a recorded run did and what is wrong with it, in the terminal."""

from __future__ import annotations

import argparse


class Report:
    """Summarise a recorded session: status, backend, devices, events, traces and findings.

    ttrecord report SESSION.db
    ttrecord report SESSION.db --html -o report.html

    Shows how the run ended (for a crash or hang, the call that was running and its line), the
    backend (real ttnn or the emulator), the devices, event counts per phase and kind, each
    trace (ops captured, replays, bytes written) and the hazards grouped by severity with their
    source lines. Use `ttrecord check` for machine-readable output and exit codes.
    With --html, writes one self-contained page instead (memory map, timeline, findings).
    """

    @staticmethod
    def prepare_parser(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("session", metavar="SESSION.db", help="a recorded session")
        parser.add_argument("-q", "--quiet", action="store_true",
                            help="no progress bar on the terminal")  # fmt: skip
        parser.add_argument("--html", action="store_true",
                            help="write an HTML report (one file, works offline)")  # fmt: skip
        parser.add_argument("-o", "--output", metavar="FILE",
                            help="where --html writes (default: SESSION.html)")  # fmt: skip

    def run(self, args: argparse.Namespace) -> int:
        import os
        import sys

        if args.html:
            return _html(args)
        from ttrecord.report.summary import render_report

        try:
            render_report(args.session, sys.stdout, quiet=args.quiet)
            sys.stdout.flush()
        except BrokenPipeError:  # `ttrecord report … | head`
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


def _html(args: argparse.Namespace) -> int:
    import sys
    from pathlib import Path

    from ttrecord.errors import TtrecordError
    from ttrecord.report.html import write_html_report

    out = args.output or str(Path(args.session).with_suffix(".html"))
    try:
        size = write_html_report(args.session, out)
    except OSError as exc:
        raise TtrecordError(f"{out}: cannot be written ({exc.strerror})") from None
    print(f"ttrecord report: wrote {out} ({size:,} bytes)", file=sys.stderr)
    return 0
