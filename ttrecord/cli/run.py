"""`ttrecord run`: parse the command line, check the target, hand it to the supervisor."""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from ttrecord.errors import TtrecordError
from ttrecord.terminal import wrap

if TYPE_CHECKING:
    from ttrecord.launch import Launch


def _positive(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be positive: {text}")
    return value


def _depth(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if not 0 <= value <= 64:
        raise argparse.ArgumentTypeError(f"must be between 0 and 64: {text}")
    return value


def default_output(program: str, now: float | None = None) -> Path:
    stem = Path(program).stem if not program.startswith("-m ") else program[3:].rsplit(".", 1)[-1]
    stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(now))
    return Path(f"ttrecord-{stem}-{stamp}.db")


def _output_folder(output: str | None) -> Path | None:
    """-o names a folder (an existing one, or a path ending in /): sessions of a launch go in
    it, one per rank."""
    if output is None:
        return None
    path = Path(output)
    return path if path.is_dir() or output.endswith(("/", os.sep)) else None


def rank_output(output: str | None, program: str, launch: Launch | None) -> Path:
    """The session path of this process: -o as given for a single process; under a launcher,
    each rank's own file (rank, world size and host in its name) so ranks never share one:
    `-o run.db` -> run-rank1of2-host.db, `-o runs/` -> runs/ttrecord-<program>-<time>-rank1of2-host.db."""
    folder = _output_folder(output)
    if launch is None:
        return Path(output) if output else default_output(program)
    if output is None or folder is not None:
        base = default_output(program)
        path = (folder or Path(".")) / f"{base.stem}-{launch.name_part}{base.suffix}"
        return path if folder is not None else Path(path.name)
    given = Path(output)
    if launch.size == 1:
        return given
    return given.with_name(f"{given.stem}-{launch.name_part}{given.suffix or '.db'}")


_CHECK_MEANS = {0: "nothing at or above --fail-on {}", 1: "a finding at or above --fail-on {}",
                4: "nothing to judge"}


def both_codes(program: int, check: int, fail_on: str) -> str:
    """The one line `run --check` ends with: the program's code and the check's, apart (the
    exit status can carry only one). Fixed words, so CI can read it:
    `ttrecord run: program exit code P; check exit code C (...)`."""
    means = _CHECK_MEANS.get(check, "the session could not be checked").format(fail_on)
    shown = "the program's" if program != 0 else "the check's"
    return (f"ttrecord run: program exit code {program}; check exit code {check} ({means});"
            f" exiting with {shown}")


class Run:
    """Run a Python program with ttnn recorded into a session file.

    Examples:
      ttrecord run model.py --steps 10
      ttrecord run --backend emulator -o decode.db samples/clean_decode.py
      ttrecord run -m mypkg.generate --prompt hi
      ttrecord run --audit-region model.Decoder.forward model.py
      ttrecord run --verify-replay --check samples/freed_input.py
      ttrecord run --native --audit-capture -- ./engine --steps 4

    The program runs in a child process with ttnn behind a recording proxy; its stdin, stdout,
    stderr, argv and exit status are its own (128+N when it dies of signal N, 124 when
    --timeout stops it); ttrecord's own failures exit 125 with one line on stderr. With
    --check, the last line on stderr gives both codes, the program's and the check's; the exit
    status is the program's when it failed, else the check's. Options go before the script; everything after the script (or after
    -m MODULE) is passed to the program. The backend chosen and the session path are printed
    on stderr, followed by the commands that inspect the session.
    """

    @staticmethod
    def prepare_parser(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--backend", choices=("auto", "ttnn", "emulator"), default="auto",
                            help="ttnn backend: the real library, the built-in emulator, or auto"
                            " (real ttnn when a device is reachable; default)")  # fmt: skip
        parser.add_argument("-o", "--output", metavar="SESSION.db",
                            help="session file (default: ttrecord-<program>-<time>.db)")  # fmt: skip
        parser.add_argument("-f", "--force", action="store_true",
                            help="overwrite the session file if it exists (only a finished"
                            " ttrecord session is ever overwritten)")  # fmt: skip
        parser.add_argument("--timeout", type=_positive, metavar="SECONDS",
                            help="stop the program after it ran this long (not counting"
                            " loading the backend) and record it as hung")  # fmt: skip
        parser.add_argument("--stack-depth", type=_depth, default=2, metavar="N",
                            help="caller frames kept with each call site (default 2)")  # fmt: skip
        parser.add_argument("--no-callsites", action="store_true",
                            help="do not record call sites (lowest overhead)")  # fmt: skip
        parser.add_argument("--no-graph-capture", action="store_true",
                            help="do not run ops inside a trace capture under ttnn's graph"
                            " capture (which shows the scratch buffers they free)")  # fmt: skip
        parser.add_argument("--audit-region", action="append", default=[], metavar="QUALNAME",
                            help="treat every call of this function as a would-be capture"
                            " region (e.g. model.Decoder.forward); repeatable")  # fmt: skip
        parser.add_argument("--native", action="store_true",
                            help="also record the program's C++ calls into tt-metal (preloads"
                            " ttrecord's native recorder; the program may be a C++ executable:"
                            " ttrecord run --native -- ./engine args; see docs/native.md)")  # fmt: skip
        parser.add_argument("--audit-capture", action="store_true",
                            help="with --native: do not pass trace begin/end/replay/release to"
                            " tt-metal, so each would-be capture runs eagerly and every"
                            " blocker in it is reported in one run")  # fmt: skip
        parser.add_argument("--verify-replay", action="store_true",
                            help="check each trace's replays against an eager re-run of its ops"
                            " on the same inputs, and that replays write nothing else (reads"
                            " device memory around execute_trace; see docs/check.md)")  # fmt: skip
        parser.add_argument("-q", "--quiet", action="store_true",
                            help="print none of ttrecord's own lines (backend, session path) on"
                            " stderr; errors still are")  # fmt: skip
        parser.add_argument("--keep-going", action="store_true",
                            help="emulator: record a TT_FATAL inside a capture (a read, a write,"
                            " an event wait, a compile) with ttnn's message and go on as if the"
                            " call were made outside it, so one run shows every mistake")  # fmt: skip
        parser.add_argument("--check", action="store_true",
                            help="run `ttrecord check` on the session afterwards")  # fmt: skip
        parser.add_argument("--fail-on", choices=("error", "warning", "info", "never"), default="error",
                            help="with --check: lowest finding severity that exits with"
                            " status 1 (default: error)")  # fmt: skip
        parser.add_argument("--allow-empty", action="store_true",
                            help="with --check: exit 0 even if there was nothing to judge (no"
                            " ttnn call, no capture)")  # fmt: skip
        parser.add_argument("--tui", action="store_true",
                            help="follow the session in `ttrecord tui` while it records (the"
                            " program's output goes to SESSION.db.out)")  # fmt: skip
        parser.add_argument("-m", dest="module", nargs=argparse.REMAINDER, metavar="MODULE",
                            help="run a library module as a script, like python -m; the rest"
                            " of the line goes to it")  # fmt: skip
        parser.add_argument("program", nargs=argparse.REMAINDER, metavar="script.py [args ...]",
                            help="the program and its arguments")  # fmt: skip

    def run(self, args: argparse.Namespace) -> int:
        from ttrecord.recorder.supervisor import RunOptions, Supervisor

        from ttrecord import launch as launches

        script, module, argv = self._target(args)
        program = script if script is not None else f"-m {module}"
        folder = _output_folder(args.output)
        launch = launches.from_environment(
            program=" ".join([program, *argv]),
            output_folder=folder if folder is not None else Path(args.output or ".").parent)
        if folder is not None and launch is None:
            raise TtrecordError(f"{args.output} is a folder; give a session file (a folder holds"
                                " one session per rank only under mpirun, mpiexec or tt-run)")  # fmt: skip
        output = rank_output(args.output, program, launch)
        self._check_paths(output)
        if output.exists() and not args.force:
            raise TtrecordError(f"{output} exists; use --force to overwrite it")
        if not output.parent.exists():
            raise TtrecordError(f"{output.parent}: no such folder")
        if output.exists():
            self._check_replaceable(output)
            for suffix in ("", "-wal", "-shm"):
                Path(str(output) + suffix).unlink(missing_ok=True)
        options = RunOptions(
            script=script,
            module=module,
            argv=argv,
            output=output,
            backend=args.backend,
            timeout=args.timeout,
            stack_depth=args.stack_depth,
            audit_regions=tuple(args.audit_region),
            callsites=not args.no_callsites,
            graph_capture=not args.no_graph_capture,
            verify_replay=args.verify_replay,
            launch=launch.to_json() if launch is not None else None,
        )
        supervisor = Supervisor(options)
        if args.native or args.audit_capture:
            from ttrecord.native.supervisor import NativeSupervisor

            supervisor = NativeSupervisor(options, audit=args.audit_capture)
        if args.keep_going:
            if args.backend == "ttnn":
                raise TtrecordError("--keep-going needs the emulator: real ttnn stops at the"
                                    " first TT_FATAL (use --backend emulator)")  # fmt: skip
            from ttrecord.emulator.errors import KEEP_GOING_ENV

            os.environ[KEEP_GOING_ENV] = "1"  # the program's process inherits it
        if args.quiet:
            os.environ["TTRECORD_RUN_QUIET"] = "1"  # the recorded process drops it at start
        if args.tui:
            from ttrecord.cli.run_tui import ui_alongside

            with ui_alongside(output):
                result = supervisor.run()
        else:
            result = supervisor.run()
        if not args.quiet:
            self._summary(result)
            if launch is not None and launch.rank == 0 and (launch.size or 1) > 1:
                print(f"  ttrecord check {output.parent}   (every rank of this run, compared)",
                      file=sys.stderr)  # fmt: skip
        code = result.exit_code
        if args.check:
            from ttrecord.cli.check import Check

            check_code = Check().run(
                argparse.Namespace(session=str(output), format="text", fail_on=args.fail_on,
                                   output=None, quiet=args.quiet, allow_empty=args.allow_empty,
                                   allow_incomplete=True)  # the run's own code says it
            )
            print(wrap(both_codes(code, check_code, args.fail_on), sys.stderr, keep=10),
                  file=sys.stderr)  # fmt: skip
            code = code if code != 0 else check_code
        return code

    @staticmethod
    def _check_paths(output: Path) -> None:
        """No write through a symbolic link (the session, its log), and no stale -wal/-shm of
        another database that SQLite would read as part of the new session."""
        from ttrecord.store import liveness

        log = liveness.log_path(output)
        for path in (output, log):
            if path.is_symlink():
                raise TtrecordError(f"{path} is a symbolic link; not followed (give the path it"
                                    " points to)")  # fmt: skip
        if not os.path.lexists(output):
            for suffix in ("-wal", "-shm", "-journal"):
                side = Path(str(output) + suffix)
                if os.path.lexists(side):
                    raise TtrecordError(f"{side} exists without its session; move it or choose"
                                        " another -o")  # fmt: skip

    @staticmethod
    def _check_replaceable(output: Path) -> None:
        """--force replaces a ttrecord session, never another file or a session being recorded."""
        from ttrecord.store import liveness

        try:
            with output.open("rb") as fh:
                magic = fh.read(16)
        except OSError as exc:
            raise TtrecordError(f"{output}: cannot be read ({exc.strerror})") from None
        from ttrecord.store.opening import is_session_file

        if magic != b"SQLite format 3\x00" or not is_session_file(output):
            raise TtrecordError(f"{output} is not a ttrecord session; not overwritten (choose"
                                " another -o)")  # fmt: skip
        if liveness.being_recorded(output):
            raise TtrecordError(f"{output} is being recorded by another `ttrecord run`;"
                                " not overwritten")  # fmt: skip

    @staticmethod
    def _target(args: argparse.Namespace) -> tuple[str | None, str | None, list[str]]:
        """(script, module, program argv) from the command line; checks they exist."""
        program = list(args.program)
        if program and program[0] == "--":
            program = program[1:]
        if args.module is not None:
            if not args.module:
                raise TtrecordError("-m needs a module name")
            module, argv = args.module[0], args.module[1:]
            sys.path.insert(0, os.getcwd())
            try:
                spec = importlib.util.find_spec(module)
            except (ImportError, ValueError) as exc:
                raise TtrecordError(f"cannot find module {module!r} ({exc})") from None
            finally:
                sys.path.pop(0)
            if spec is None:
                raise TtrecordError(f"no module named {module!r}")
            return None, module, argv
        if not program:
            raise TtrecordError("no program given: ttrecord run [options] script.py [args ...]")
        script = program[0]
        if not os.path.exists(script):
            raise TtrecordError(f"{script}: no such file")
        if os.path.isdir(script):
            raise TtrecordError(f"{script}: is a folder, not a Python script")
        return script, None, program[1:]

    @staticmethod
    def _summary(result: object) -> None:
        path = result.path  # type: ignore[attr-defined]
        status = result.status  # type: ignore[attr-defined]
        shown = str(path)
        held = getattr(result, "held", None)
        stopped = getattr(result, "stopped", None)
        if held is None:  # no readable session file: say so, in one line
            print(f"ttrecord: no session written to {shown}: {stopped or 'it cannot be read'};"
                  " the program ran unrecorded", file=sys.stderr)  # fmt: skip
            return
        status, events = held  # what a reader will find in the file
        if status == "unreadable":
            print(f"ttrecord: session {shown} could not be read back after the run:"
                  f" {stopped or 'its end may be missing'}", file=sys.stderr)  # fmt: skip
            return
        if status == "running":
            status = "unfinished on disk (readers show it as stopped abnormally)"
        detail = f"{events} events"
        if result.last_call is not None:  # type: ignore[attr-defined]
            detail += f", last call #{result.last_call}"  # type: ignore[attr-defined]
        if stopped:
            detail += f"; partial recording: {stopped}"
        # one line, whatever its width: tests and scripts strip ttrecord's lines by prefix
        print(f"ttrecord: session {shown} ({status}, {detail})", file=sys.stderr)
        print(f"  ttrecord check {shown}\n  ttrecord report {shown}\n  ttrecord tui {shown}",
              file=sys.stderr)  # fmt: skip
