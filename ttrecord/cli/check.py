"""`ttrecord check`: every trace-capture hazard of a recorded session, for people and CI."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ttrecord.errors import TtrecordError


class Check:
    """Find every trace-capture hazard (the rules listed below) in a recorded session.

    ttrecord check SESSION.db                     findings with their lines, in the terminal
    ttrecord check SESSION.db --format sarif -o ttrecord.sarif   for GitHub code scanning
    ttrecord check SESSION.db --format json --fail-on warning    for scripts and CI

    ttrecord check SESSION.db --baseline main.json        fail only on findings main lacks
    ttrecord check runs/                                  every rank of an mpirun/tt-run run

    Exits 1 when a finding reaches the --fail-on level (default: error; with --baseline, a
    new finding), 4 when there was nothing to judge: no backend ran, no ttnn call was
    recorded, or nothing was captured (--allow-empty turns this off), 3 when the recorded
    run did not finish (crashed, raised, hung or was interrupted: its findings cover only what
    it did before it stopped; --allow-incomplete turns this off), 0 otherwise, and 2 when the
    session cannot be read. The findings are also stored in the session, where
    `ttrecord tui` and `ttrecord report` show them.
    """

    @staticmethod
    def prepare_parser(parser: argparse.ArgumentParser) -> None:
        _list_rules_in_help(parser)
        parser.add_argument("session", metavar="SESSION.db", nargs="+",
                            help="a recorded session; or the sessions (files, or their folder)"
                            " of one multi-host run, checked together: each rank's findings"
                            " and the ranks compared (TR019)")  # fmt: skip
        parser.add_argument("--format", choices=("text", "json", "sarif"), default="text",
                            help="output format (default: text)")  # fmt: skip
        parser.add_argument(
            "--fail-on", choices=("error", "warning", "info", "never"), default="error",
            help="lowest severity that exits with status 1 (default: error)",
        )  # fmt: skip
        parser.add_argument("--allow-incomplete", action="store_true",
                            help="exit 0 (when nothing reaches --fail-on) even if the recorded"
                            " run did not finish")  # fmt: skip
        parser.add_argument("--allow-empty", action="store_true",
                            help="exit 0 (when nothing reaches --fail-on) even if there was"
                            " nothing to judge: no backend, no ttnn call, no capture")  # fmt: skip
        parser.add_argument("--baseline", metavar="OLD",
                            help="an older session or `check --format json` file: findings are"
                            " shown as fixed, still there or new, and only new ones count"
                            " for the exit status")  # fmt: skip
        parser.add_argument("-o", "--output", metavar="FILE",
                            help="write the report to FILE instead of standard output")  # fmt: skip
        parser.add_argument("-f", "--force", action="store_true",
                            help="replace FILE if it is an earlier ttrecord output (never a session or"
                            " another file)")  # fmt: skip
        parser.add_argument("-q", "--quiet", action="store_true",
                            help="no progress bar on the terminal")  # fmt: skip

    def run(self, args: argparse.Namespace) -> int:
        from ttrecord.report import run_check

        targets = [args.session] if isinstance(args.session, str) else list(args.session)
        check: Any = run_check
        subject: Any = targets[0]
        inputs = targets
        if len(targets) > 1 or Path(targets[0]).is_dir():
            from ttrecord.report.ranks import run_ranks_check
            from ttrecord.store.ranks import expand, one_run

            files = expand(targets)
            inputs = [str(f) for f in files]
            ranks = one_run(files)
            if len(ranks) == 1:
                subject = str(ranks[0].path)
            else:
                check, subject = run_ranks_check, ranks
        if args.output is None:
            return int(check(subject, args.format, args.fail_on, sys.stdout, args.quiet,
                             **_gates(args)))  # fmt: skip
        from ttrecord.cli.output import check_output, replaced_on_success

        path = check_output(args.output, inputs=inputs, force=args.force)
        try:
            with replaced_on_success(path) as temp, open(temp, "w", encoding="utf-8") as out:
                return int(check(subject, args.format, args.fail_on, out, args.quiet,
                                 **_gates(args)))  # fmt: skip
        except OSError as exc:
            raise TtrecordError(f"{args.output}: cannot write ({exc.strerror or exc})") from None


def _gates(args: argparse.Namespace) -> dict[str, Any]:
    """The exit-status switches (`run --check` builds its own Namespace with some of them)."""
    return {"allow_incomplete": getattr(args, "allow_incomplete", False),
            "allow_empty": getattr(args, "allow_empty", False),
            "baseline": getattr(args, "baseline", None)}  # fmt: skip


def _list_rules_in_help(parser: argparse.ArgumentParser) -> None:
    """Append the registered rules to this command's help, when the help is shown: importing
    every rule module (~50 ms) is not a cost every `ttrecord` command should pay."""
    format_help = parser.format_help

    def with_rules() -> str:
        from ttrecord.analysis.registry import rules
        from ttrecord.report.rule_docs import help_list

        return format_help().rstrip("\n") + "\n\n" + help_list(rules().values()) + "\n"

    parser.format_help = with_rules  # type: ignore[method-assign]
