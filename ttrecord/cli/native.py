"""`ttrecord native`: the native recorder of C++ programs (see docs/native.md)."""

from __future__ import annotations

import argparse
from pathlib import Path

from ttrecord.errors import TtrecordError


class Native:
    """Check that C++ programs calling tt-metal can be recorded with `ttrecord run --native`.

    Examples:
      ttrecord native doctor
      ttrecord native doctor ./engine
      ttrecord native doctor --library /opt/tt-metal/build/lib/libtt_metal.so

    `doctor` prints which roles (reads, writes, trace phases, syncs, allocations) are hooked in
    the installed tt-metal library, whether that library is interposable (a -Bsymbolic build
    is not), whether PROGRAM loads it dynamically (a static build cannot be recorded), and
    builds the native recorder (the install step; it is cached). Exit status 1 when something
    would not be recorded.
    """

    @staticmethod
    def prepare_parser(parser: argparse.ArgumentParser) -> None:
        sub = parser.add_subparsers(dest="native_command", metavar="SUBCOMMAND", required=True)
        doctor = sub.add_parser("doctor", help="which roles are hooked; is the build interposable")
        doctor.add_argument("program", nargs="?", metavar="PROGRAM",
                            help="a C++ program to check as well (static builds are unsupported)")  # fmt: skip
        doctor.add_argument("--library", metavar="LIBTT_METAL.so",
                            help="the tt-metal library to check (default: the installed ttnn's)")  # fmt: skip
        doctor.add_argument("--no-build", action="store_true",
                            help="do not build the native recorder, only check")  # fmt: skip

    def run(self, args: argparse.Namespace) -> int:
        from ttrecord.native.build import tt_metal_library
        from ttrecord.native.doctor import diagnose

        library = Path(args.library) if args.library else tt_metal_library()
        if not library.is_file():
            raise TtrecordError(f"{library}: no such file")
        program = Path(args.program) if args.program else None
        report = diagnose(library, program, build=not args.no_build)
        print("\n".join(report.lines))
        if report.problems:
            print(f"{report.problems} problem(s): see docs/native.md")
            return 1
        print("everything needed by ttrecord run --native is in place")
        return 0
