"""The recorded program's process: install the backend and the proxy, then run the program.

Started by the supervisor as `python -m ttrecord.recorder.child CONFIG_JSON PROGRAM_ARGV…`.
The program sees the argv, `__name__ == "__main__"`, `sys.path[0]` and standard streams it
would see under plain `python`, and the same `sys.orig_argv`, `sys.excepthook` (called for an
uncaught exception), signal handlers and faulthandler state. The child's last records say how
the program ended (an exception's type, message and traceback; the exit code); a process that
dies leaves no such record, which is how the supervisor tells a crash from an exit.

The child never outlives the supervisor: it asks the kernel for SIGTERM when the supervisor
dies (PR_SET_PDEATHSIG), so a killed `ttrecord run` does not leave the program running with
nobody reading its log.
"""

from __future__ import annotations

import atexit
import builtins
import importlib.machinery
import ctypes
import io
import json
import os
import runpy
import signal
import sys
import traceback
import types
from types import TracebackType
from typing import Any, NoReturn

import ttrecord
from ttrecord.errors import TtrecordError
from ttrecord.recorder import backend as backends
from ttrecord.recorder import records
from ttrecord.recorder.log import LogWriter
from ttrecord.recorder import setup

_TTRECORD_DIR = os.path.dirname(os.path.abspath(ttrecord.__file__))
_RECORDER_DIR = os.path.join(_TTRECORD_DIR, "recorder") + os.sep


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


def _recorder_frame(tb: TracebackType) -> bool:
    """A frame of ttrecord's own: the proxy and recorder, and the emulator standing in for
    ttnn (whose frames say nothing about the program: the program's line is the ttnn call).
    TTRECORD_DEBUG=1 keeps the emulator's, to debug the emulator itself."""
    name = tb.tb_frame.f_code.co_filename
    if _KEEP_EMULATOR_FRAMES:
        return name.startswith(_RECORDER_DIR)
    return name.startswith(_TTRECORD_DIR)


_KEEP_EMULATOR_FRAMES = bool(os.environ.get("TTRECORD_DEBUG"))


def _without_recorder(tb: TracebackType | None) -> TracebackType | None:
    """The traceback as plain Python shows it for the program: ttrecord's frames (runner,
    proxy, emulator) left out; a real ttnn's frames stay, as plain python shows them."""
    tb = _user_traceback(tb)
    head = tb
    while head is not None and head.tb_next is not None:
        nxt: TracebackType | None = head.tb_next
        while nxt is not None and _recorder_frame(nxt):
            nxt = nxt.tb_next
        head.tb_next = nxt
        head = nxt
    return tb


def _die_with_supervisor(supervisor: int | None) -> None:
    """SIGTERM this process when the supervisor dies (Linux); exit now if it is already gone."""
    if supervisor is None or not sys.platform.startswith("linux"):
        return
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGTERM, 0, 0, 0)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
    if os.getppid() != supervisor:  # it died before the request took effect
        os._exit(128 + signal.SIGTERM)


def _run_program(config: dict[str, Any], argv: list[str]) -> None:
    if config.get("module"):
        sys.argv = [config["module"], *argv]
        sys.orig_argv = [sys.executable, "-m", config["module"], *argv]
        runpy.run_module(config["module"], run_name="__main__", alter_sys=True)
    else:
        # As `python script.py` does: argv[0] as typed, __file__ (and so every code object's
        # file name, which call sites use) absolute, the script's folder first on sys.path.
        script = os.path.abspath(config["script"])
        sys.argv = [config["script"], *argv]
        sys.orig_argv = [sys.executable, config["script"], *argv]
        sys.path[0] = os.path.dirname(script)
        main_module = types.ModuleType("__main__")
        main_module.__file__ = script
        main_module.__dict__.update(__cached__=None, __builtins__=builtins)
        main_module.__loader__ = importlib.machinery.SourceFileLoader("__main__", script)
        sys.modules["__main__"] = main_module
        with io.open_code(script) as fh:
            code = compile(fh.read(), script, "exec", dont_inherit=True)
        exec(code, main_module.__dict__)


def _uncaught(log: LogWriter, exc: BaseException, code: int) -> int:
    """Record an exception that ended the program, then hand it to sys.excepthook (the
    program's own, if it set one) as the interpreter would."""
    tb = _without_recorder(exc.__traceback__)
    text = "".join(traceback.format_exception(type(exc), exc, tb))
    message = "" if isinstance(exc, KeyboardInterrupt) else str(exc)
    log.write(records.new_exception(type=type(exc).__name__, message=message, traceback=text))
    try:
        sys.excepthook(type(exc), exc.with_traceback(tb), tb)
    except BaseException:  # a failing hook: the interpreter prints both, so do we
        sys.stderr.write("Error in sys.excepthook:\n")
        traceback.print_exc()
        sys.stderr.write("\nOriginal exception was:\n" + text)
    return code


def main() -> int:
    config = json.loads(sys.argv[1])
    program_argv = sys.argv[2:]
    _die_with_supervisor(config.get("supervisor"))
    log = LogWriter(config["log"])
    try:
        chosen = backends.choose(config["backend"])
    except Exception as exc:  # a backend that cannot load: one line, the session marked failed
        if not isinstance(exc, TtrecordError):
            exc = TtrecordError(f"backend {config['backend']} cannot load: {exc!r}", 125)
        log.write(records.new_exception(type="TtrecordError", message=str(exc), traceback=""))
        log.write(records.new_exit(exit_code=exc.exit_code))
        return exc.exit_code  # the supervisor reports it
    # one line, whatever its width: it shares the program's stderr, where readers (and the
    # transparency tests) drop ttrecord's lines by their prefix
    if not os.environ.pop("TTRECORD_RUN_QUIET", None):  # `run -q`; the program never sees it
        print(f"ttrecord: backend {chosen.name} ({chosen.reason})", file=sys.stderr)
    if chosen.name == "emulator":  # spawned workers import the same backend (last resort:
        # a real ttnn importable in the worker still wins, as it would in plain python)
        shim = os.path.join(os.path.dirname(os.path.abspath(__file__)), "spawn_path")
        os.environ["PYTHONPATH"] = os.pathsep.join(
            [*filter(None, [os.environ.get("PYTHONPATH")]), shim])
        sys.path.append(shim)  # multiprocessing hands the parent's sys.path to its workers
    log.write(records.new_header(backend=chosen.name, backend_reason=chosen.reason,
                                  ttnn_version=chosen.version, pid=os.getpid()))

    recording = setup.start(chosen, log, setup.Options(
        stack_depth=config.get("stack_depth", 0), callsites=config.get("callsites", True),
        graph_capture=config.get("graph_capture", True),
        audit_regions=config.get("audit_regions") or (),
        verify_replay=bool(config.get("verify_replay")), hot_path=config.get("hot_path")))  # fmt: skip

    # Durability: a program that leaves through os._exit still gets its queued records (the
    # ends of calls are written when they return; only trailing frees can be queued).
    real_exit = os._exit

    def _exit(status: int) -> NoReturn:
        log.flush()
        real_exit(status)

    os._exit = _exit

    outcome = {"code": 0}

    def _close() -> None:
        # Registered first, so it runs last: after the interpreter joined the program's
        # threads and ran the program's own atexit handlers, whose ttnn calls are in the log.
        recording.finish()
        log.write(records.new_exit(exit_code=outcome["code"]))

    atexit.register(_close)
    code = 0
    try:
        _run_program(config, program_argv)
    except SystemExit as exc:
        code = _exit_code(exc)
    except KeyboardInterrupt as exc:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # finish the bookkeeping undisturbed
        code = _uncaught(log, exc, 130)
    except BaseException as exc:
        code = _uncaught(log, exc, 1)
    outcome["code"] = code
    return code


if __name__ == "__main__":
    from ttrecord.recorder import child as _child  # the importable copy, not __main__

    sys.exit(_child.main())
