"""The recorded program's process: install the backend and the proxy, then run the program.

Started by the supervisor as `python -m ttrecord.recorder.child CONFIG_JSON PROGRAM_ARGV…`.
The program sees the argv, `__name__ == "__main__"`, `sys.path[0]` and standard streams it
would see under plain `python`. The child's last records say how the program ended (an
exception's type, message and traceback; the exit code); a process that dies leaves no such
record, which is how the supervisor tells a crash from an exit.
"""

from __future__ import annotations

import atexit
import builtins
import importlib.machinery
import io
import faulthandler
import json
import os
import runpy
import signal
import sys
import traceback
import types
from types import TracebackType
from typing import Any

import ttrecord
from ttrecord import audit
from ttrecord.errors import TtrecordError
from ttrecord.recorder import backend as backends
from ttrecord.recorder.log import LogWriter, RecordType
from ttrecord.recorder.proxy import install
from ttrecord.recorder.recorder import Recorder
from ttrecord.recorder.regions import AuditRegions

_TTRECORD_DIR = os.path.dirname(os.path.abspath(ttrecord.__file__))


def _user_traceback(tb: TracebackType | None) -> TracebackType | None:
    """Drop the runner's own frames (runpy, ttrecord) from the top of a traceback."""
    while tb is not None:
        name = tb.tb_frame.f_code.co_filename
        if not (name.startswith(_TTRECORD_DIR) or "runpy" in name):
            break
        tb = tb.tb_next
    return tb


def _exit_code(exc: SystemExit) -> int:
    code = exc.code
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


def _run_program(config: dict[str, Any], argv: list[str]) -> None:
    if config.get("module"):
        sys.argv = [config["module"], *argv]
        runpy.run_module(config["module"], run_name="__main__", alter_sys=True)
    else:
        # As `python script.py` does: argv[0] as typed, __file__ (and so every code object's
        # file name, which call sites use) absolute, the script's folder first on sys.path.
        script = os.path.abspath(config["script"])
        sys.argv = [config["script"], *argv]
        sys.path[0] = os.path.dirname(script)
        main_module = types.ModuleType("__main__")
        main_module.__file__ = script
        main_module.__cached__ = None
        main_module.__builtins__ = builtins
        main_module.__loader__ = importlib.machinery.SourceFileLoader("__main__", script)
        sys.modules["__main__"] = main_module
        with io.open_code(script) as fh:
            code = compile(fh.read(), script, "exec", dont_inherit=True)
        exec(code, main_module.__dict__)


def main() -> int:
    config = json.loads(sys.argv[1])
    program_argv = sys.argv[2:]
    log = LogWriter(config["log"])
    try:
        chosen = backends.choose(config["backend"])
    except TtrecordError as exc:
        log.write((RecordType.EXCEPTION, "TtrecordError", str(exc), ""))
        log.write((RecordType.EXIT, exc.exit_code))
        return exc.exit_code  # the supervisor reports it
    print(f"ttrecord: backend {chosen.name} ({chosen.reason})", file=sys.stderr)
    log.write((RecordType.HEADER, chosen.name, chosen.reason, chosen.version, os.getpid()))

    internal = [_TTRECORD_DIR, os.path.dirname(os.path.abspath(chosen.module.__file__))]
    recorder = Recorder(chosen.module, log, internal, config.get("stack_depth", 0),
                        callsites=config.get("callsites", True))  # fmt: skip
    recorder.temporaries.enabled &= config.get("graph_capture", True)
    if config.get("audit_regions"):
        recorder.regions = AuditRegions(config["audit_regions"], recorder)
    if config.get("verify_replay"):
        from ttrecord.recorder.verify import Verifier

        recorder.verifier = Verifier(recorder)
    install(chosen.module, recorder)
    audit._recorder = recorder

    # Durability: a program that leaves through os._exit or is stopped by the supervisor's
    # SIGUSR1 (before a timeout kill) still gets its queued records into the log.
    real_exit = os._exit

    def _exit(code: int) -> None:
        log.flush()
        real_exit(code)

    os._exit = _exit
    signal.signal(signal.SIGUSR1, lambda *_: log.flush_from_signal_handler())
    faulthandler.enable()  # a native crash prints the Python stacks, as it would without us

    outcome = {"code": 0}

    def _close() -> None:
        # Registered first, so it runs last: after the interpreter joined the program's
        # threads and ran the program's own atexit handlers, whose ttnn calls are in the log.
        if recorder.regions is not None:
            recorder.regions.finish()
        recorder.finish()
        log.write((RecordType.EXIT, outcome["code"]))

    atexit.register(_close)
    code = 0
    try:
        _run_program(config, program_argv)
    except SystemExit as exc:
        code = _exit_code(exc)
    except KeyboardInterrupt as exc:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # finish the bookkeeping undisturbed
        tb = "".join(traceback.format_exception(type(exc), exc, _user_traceback(exc.__traceback__)))
        log.write((RecordType.EXCEPTION, "KeyboardInterrupt", "", tb))
        sys.stderr.write(tb)
        code = 130
    except BaseException as exc:
        tb = "".join(traceback.format_exception(type(exc), exc, _user_traceback(exc.__traceback__)))
        log.write((RecordType.EXCEPTION, type(exc).__name__, str(exc), tb))
        sys.stderr.write(tb)
        code = 1
    outcome["code"] = code
    return code


if __name__ == "__main__":
    from ttrecord.recorder import child as _child  # the importable copy, not __main__

    sys.exit(_child.main())
