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
]


# The exit-code contract of every command (the README's "Exit codes" table says the same).
EXIT_CODES = """\
exit codes:
  0    nothing reached --fail-on (check, run --check); captures match (diff)
  1    a finding at or above --fail-on (check, run --check); drift (diff)
  2    usage error, or a session or input that cannot be read (one line on
       stderr)
  3    check of a run that did not finish: it crashed, raised, hung or was
       interrupted (--allow-incomplete turns this off)
  130  ttrecord itself interrupted (Ctrl-C)
  run  exits with the program's own code (128+N when signal N killed it, 124
       when --timeout stopped it); with --check, the check's code when the
       program exited 0
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
        formatter_class=argparse.RawDescriptionHelpFormatter,
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
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        command.prepare_parser(p)
        p.set_defaults(_command=command)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        command: type[Command] = args._command
        return command().run(args)
    except TtrecordError as exc:
        print(f"ttrecord {args.command}: {clean(str(exc), 1000)}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        return 130
    except OSError as exc:  # an output file or folder that cannot be written
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"ttrecord {args.command}: {clean(where, 500)}{exc.strerror or exc}",
              file=sys.stderr)  # fmt: skip
        return 2
    except DAMAGE as exc:
        if os.environ.get("TTRECORD_DEBUG"):
            raise
        target = getattr(args, "session", None) or " ".join(getattr(args, "targets", []) or [])
        print(f"ttrecord {args.command}: {clean(target, 500)}{': ' if target else ''}"
              f"{clean(describe(exc), 500)}", file=sys.stderr)  # fmt: skip
        return 2


if __name__ == "__main__":
    sys.exit(main())
