"""`ttrecord` entry point: builds the parser from the command modules and maps errors to exits.

Each subcommand is one module in this package with a class whose docstring is its help, a
`prepare_parser(parser)` and a `run(args) -> int`. Adding a command is one file and one line
in COMMANDS. Modules import heavy libraries (Textual, the recorder) inside `run`, so
`ttrecord --help` stays fast.
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import os
import sys
from collections.abc import Sequence
from typing import Protocol, cast

from ttrecord import __version__
from ttrecord.cli.helpformat import Formatter
from ttrecord.errors import TtrecordError
from ttrecord.store.damage import DAMAGE, describe
from ttrecord.textsafe import clean

# (subcommand, module under ttrecord.cli, class name)
COMMANDS: list[tuple[str, str, str]] = [
    ("run", "run", "Run"),
    ("sessions", "sessions", "Sessions"),
    ("export", "export", "Export"),
    ("tui", "tui", "Tui"),
    ("check", "check", "Check"),
    ("report", "report", "Report"),
    ("diff", "diff", "Diff"),
    ("recover", "recover", "Recover"),
    ("native", "native", "Native"),
]


# The exit-code contract of every command (the README's "Exit codes" table says the same).
EXIT_CODES = """\
exit codes:
  0    nothing reached --fail-on (check, run --check); captures match (diff)
  1    a finding at or above --fail-on (check, run --check); drift (diff)
  2    usage error, or a session or input that cannot be read (one line on stderr)
  3    check of a run that did not finish: it crashed, raised, hung or was interrupted (--allow-incomplete turns this off)
  125  run: ttrecord itself failed (usage error, a session it cannot write, no backend), said in one line on stderr starting with "ttrecord run:"
  130  ttrecord itself interrupted (Ctrl-C)
  run  exits with the program's own code (128+N when signal N killed it, 124 when --timeout stopped it); with --check, the check's code when the program exited 0, and one line on stderr with both codes
"""


class Command(Protocol):
    """What each class named in COMMANDS provides; its docstring is the command's help."""

    @staticmethod
    def prepare_parser(parser: argparse.ArgumentParser) -> None: ...
    def run(self, args: argparse.Namespace) -> int: ...


def _load(module: str, cls: str) -> type[Command]:
    return cast("type[Command]", getattr(importlib.import_module(f"ttrecord.cli.{module}"), cls))


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ttrecord",
        description="Record a ttnn program and find every trace-capture hazard at once.",
        epilog=EXIT_CODES,
        formatter_class=Formatter,
    )
    parser.add_argument("--version", action="version", version=f"ttrecord {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, module, cls in COMMANDS:
        command = _load(module, cls)
        doc = inspect.cleandoc(command.__doc__ or "")  # docstring indentation off the help
        p = sub.add_parser(
            name,
            help=doc.splitlines()[0] if doc else None,
            description=doc,
            formatter_class=Formatter,
        )
        command.prepare_parser(p)
        p.set_defaults(_command=command)
    return parser


# `ttrecord run` passes the program's exit code through, so its own failures need a code a
# program rarely uses: 125, as `timeout`, `env` and `docker run` do for theirs.
RUN_OWN_ERROR = 125


def _command_of(argv: Sequence[str]) -> str | None:
    """The subcommand named on the command line (before parsing, for usage errors)."""
    return next((a for a in argv if not a.startswith("-")), None)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse: usage errors exit 2, --help and --version 0
        if exc.code == 2 and _command_of(argv) == "run":
            return RUN_OWN_ERROR
        raise
    code = _run(args)
    if args.command == "run" and code == 2 and getattr(args, "_own_error", False):
        return RUN_OWN_ERROR
    return code


def _run(args: argparse.Namespace) -> int:
    """The command's exit code; ttrecord's own failures as one line on stderr (args._own_error
    says one happened, so `run` can tell it from the program's code)."""
    try:
        command: type[Command] = args._command
        return command().run(args)
    except TtrecordError as exc:
        print(f"ttrecord {args.command}: {clean(str(exc), 1000)}", file=sys.stderr)
        args._own_error = True
        return exc.exit_code
    except KeyboardInterrupt:
        return 130
    except OSError as exc:  # an output file or folder that cannot be written
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"ttrecord {args.command}: {clean(where, 500)}{exc.strerror or exc}",
              file=sys.stderr)  # fmt: skip
        args._own_error = True
        return 2
    except DAMAGE as exc:
        if os.environ.get("TTRECORD_DEBUG"):
            raise
        target = getattr(args, "session", None) or " ".join(getattr(args, "targets", []) or [])
        print(f"ttrecord {args.command}: {clean(target, 500)}{': ' if target else ''}"
              f"{clean(describe(exc), 500)}", file=sys.stderr)  # fmt: skip
        args._own_error = True
        return 2


if __name__ == "__main__":
    sys.exit(main())
