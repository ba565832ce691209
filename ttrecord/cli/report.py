"""`ttrecord report`: what a recorded run did and what is wrong with it, in the terminal."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from ttrecord.errors import TtrecordError
from ttrecord.terminal import wrap

if TYPE_CHECKING:
    from ttrecord.store.ranks import RankSession


class Report:
    """Summarise a recorded session: status, backend, devices, events, traces and findings.

    ttrecord report SESSION.db
    ttrecord report SESSION.db --html -o report.html
    ttrecord report SESSION.db --format json

    Shows how the run ended (for a crash or hang, the call that was running and its line), the
    backend (real ttnn or the emulator), the devices, event counts per phase and kind, each
    trace (ops captured, replays, bytes written) and the hazards grouped by severity with their
    source lines. Use `ttrecord check` for machine-readable output and exit codes.
    With --html, writes one self-contained page instead (memory map, timeline, findings).
    """

    @staticmethod
    def prepare_parser(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("session", metavar="SESSION.db", nargs="+",
                            help="a recorded session; or the sessions (files, or their folder)"
                            " of one multi-host run: each rank's report, then the ranks"
                            " compared")  # fmt: skip
        parser.add_argument("-q", "--quiet", action="store_true",
                            help="no progress bar on the terminal")  # fmt: skip
        parser.add_argument("--format", choices=("text", "json"), default="text",
                            help="output format (default: text; json is documented in"
                            " docs/report-json.md)")  # fmt: skip
        parser.add_argument("--html", action="store_true",
                            help="write an HTML report (one file, works offline)")  # fmt: skip
        parser.add_argument("-o", "--output", metavar="FILE",
                            help="write to FILE (--html default: SESSION.html; else standard"
                            " output)")  # fmt: skip
        parser.add_argument("-f", "--force", action="store_true",
                            help="replace FILE if it is an earlier ttrecord output (never a session or"
                            " another file)")  # fmt: skip

    def run(self, args: argparse.Namespace) -> int:
        import os
        import sys

        targets = [args.session] if isinstance(args.session, str) else list(args.session)
        args.session = targets[0]
        if len(targets) > 1 or Path(targets[0]).is_dir():
            from ttrecord.store.ranks import expand, one_run

            ranks = one_run(expand(targets))
            if len(ranks) > 1:
                return _ranks(args, ranks)
            args.session = str(ranks[0].path)
        if args.html:
            return _html(args)
        from ttrecord.report import summary, summary_json

        render = summary_json.render if args.format == "json" else summary.render_report
        if args.output is not None:
            from ttrecord.cli.output import check_output, replaced_on_success

            path = check_output(args.output, inputs=[args.session], force=args.force)
            try:
                with replaced_on_success(path) as temp, open(temp, "w", encoding="utf-8") as out:
                    render(args.session, out, quiet=args.quiet)
            except OSError as exc:
                raise TtrecordError(f"{args.output}: cannot write ({exc.strerror or exc})") from None
            return 0
        try:
            render(args.session, sys.stdout, quiet=args.quiet)
            sys.stdout.flush()
        except BrokenPipeError:  # `ttrecord report … | head`
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


def _ranks(args: argparse.Namespace, ranks: list[RankSession]) -> int:
    """The report of a multi-host run's ranks (text or json; one HTML page per rank)."""
    import sys

    from ttrecord.report.ranks import render_ranks_report

    if args.html:
        raise TtrecordError("--html writes one session's page: give one rank's session")
    if args.output is not None:
        from ttrecord.cli.output import check_output, replaced_on_success

        path = check_output(args.output, inputs=[str(r.path) for r in ranks], force=args.force)
        try:
            with replaced_on_success(path) as temp, open(temp, "w", encoding="utf-8") as out:
                render_ranks_report(ranks, out, args.format, quiet=args.quiet)
        except OSError as exc:
            raise TtrecordError(f"{args.output}: cannot write ({exc.strerror or exc})") from None
        return 0
    try:
        render_ranks_report(ranks, sys.stdout, args.format, quiet=args.quiet)
        sys.stdout.flush()
    except BrokenPipeError:
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0


def _html(args: argparse.Namespace) -> int:
    import sys
    from pathlib import Path

    from ttrecord.report.html import write_html_report

    if args.format != "text":
        raise TtrecordError("--html and --format json are two outputs; choose one")
    from ttrecord.cli.output import check_output, replaced_on_success

    out = args.output or str(Path(args.session).with_suffix(".html"))
    path = check_output(out, inputs=[args.session], force=args.force)
    try:
        with replaced_on_success(path) as temp:
            size = write_html_report(args.session, str(temp))
    except OSError as exc:
        raise TtrecordError(f"{out}: cannot be written ({exc.strerror})") from None
    print(wrap(f"ttrecord report: wrote {out} ({size:,} bytes)", sys.stderr, keep=4),
          file=sys.stderr)  # fmt: skip
    return 0
