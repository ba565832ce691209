"""`ttrecord run`'s parent process: runs the program in a child and turns its log into a session.

The supervisor never imports ttnn. It starts the child, tails the child's log into the session
file in batches while the program runs, and when the child is gone decides how the run ended:

- ok: the program finished (any exit code; the code is kept);
- error: a Python exception escaped (type, message, traceback from the child's last record);
- crashed: the child died of a signal, or left through os._exit inside a ttnn call; the call
  still open is stored with Status.DIED and named in `session.last_call`;
- hung: `--timeout` expired; the child is stopped and the open call gets Status.HUNG;
- interrupted: Ctrl-C. The program gets KeyboardInterrupt (a call it unwound through is
  stored as raised with that error); the supervisor itself survives
  SIGINT (a second Ctrl-C, or a child that ignores the first, gets the child killed).
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ttrecord.errors import TtrecordError
from ttrecord.events import SessionStatus, Status
from ttrecord.recorder.decode import Decoder
from ttrecord.recorder.log import LogReader
from ttrecord.store.writer import SessionWriter

POLL_SECONDS = 0.02
HUNG_EXIT_CODE = 124  # as timeout(1)
_INTERRUPT_GRACE = 1.0  # seconds before a Ctrl-C the child did not see is forwarded to it
_KILL_GRACE = 5.0  # seconds after forwarding before the child is killed
# --timeout counts from the program's start; loading the backend (torch, ttnn) gets this long.
_STARTUP_GRACE = 120.0


@dataclass(frozen=True)
class RunOptions:
    script: str | None  # path, or None with `module`
    module: str | None
    argv: list[str]
    output: Path
    backend: str = "auto"
    timeout: float | None = None
    stack_depth: int = 0
    audit_regions: tuple[str, ...] = ()
    callsites: bool = True
    graph_capture: bool = True  # see recorder/temporaries.py
    verify_replay: bool = False  # see recorder/verify/


@dataclass(frozen=True)
class RunResult:
    path: Path
    status: SessionStatus
    exit_code: int
    last_call: int | None
    events: int


class Supervisor:
    def __init__(self, options: RunOptions) -> None:
        self.options = options
        self._interrupts: list[float] = []

    def _child_command(self, log_path: Path) -> list[str]:
        o = self.options
        config = {
            "log": str(log_path),
            "backend": o.backend,
            "stack_depth": o.stack_depth,
            "audit_regions": list(o.audit_regions),
            "callsites": o.callsites,
            "graph_capture": o.graph_capture,
            "verify_replay": o.verify_replay,
            "script": o.script,
            "module": o.module,
        }
        return [sys.executable, "-m", "ttrecord.recorder.child", json.dumps(config), *o.argv]

    def run(self) -> RunResult:
        o = self.options
        log_path = o.output.with_name(o.output.name + ".log")
        try:
            log_path.unlink(missing_ok=True)
            log_path.touch()
            writer = SessionWriter(o.output)
        except (OSError, sqlite3.Error) as exc:
            log_path.unlink(missing_ok=True)
            raise TtrecordError(f"{o.output}: cannot write the session ({exc})") from None
        program = o.script if o.script is not None else f"-m {o.module}"
        writer.start(
            script=program,
            argv=[o.script or o.module or "", *o.argv],
            backend=o.backend,
            options={"stack_depth": o.stack_depth, "audit_regions": list(o.audit_regions),
                     "timeout": o.timeout, "backend_requested": o.backend,
                     "callsites": o.callsites, "graph_capture": o.graph_capture,
                     "verify_replay": o.verify_replay},  # fmt: skip
        )
        decoder = Decoder()
        reader = LogReader(str(log_path))
        previous = signal.signal(signal.SIGINT, self._on_sigint)
        started = time.monotonic()
        hung = False
        try:
            proc = subprocess.Popen(self._child_command(log_path))
            header_seen = False
            while True:
                self._drain(reader, decoder, writer)
                if not header_seen and decoder.end.header is not None:
                    header_seen = True
                    _, backend, reason, version, pid = decoder.end.header
                    writer.update_session(backend=backend, backend_reason=reason,
                                          ttnn_version=version, pid=pid)  # fmt: skip
                    started = time.monotonic()  # the timeout counts from the program's start
                try:
                    proc.wait(timeout=POLL_SECONDS)
                    break
                except subprocess.TimeoutExpired:
                    pass
                limit = o.timeout if header_seen else (o.timeout or 0) + _STARTUP_GRACE
                if o.timeout is not None and time.monotonic() - started > limit:
                    hung = True
                    self._stop(proc)
                    break
                self._handle_interrupts(proc)
            returncode = proc.wait()
            self._drain(reader, decoder, writer)
            while reader.more:
                self._drain(reader, decoder, writer)
            if not header_seen and decoder.end.header is not None:
                _, backend, reason, version, pid = decoder.end.header
                writer.update_session(backend=backend, backend_reason=reason,
                                      ttnn_version=version, pid=pid)  # fmt: skip
            result = self._finish(writer, decoder, returncode, hung)
        finally:
            signal.signal(signal.SIGINT, previous)
            reader.close()
            writer.close()
            if not os.environ.get("TTRECORD_KEEP_LOG"):
                log_path.unlink(missing_ok=True)
        exc = decoder.end.exception
        if exc is not None and exc[0] == "TtrecordError":  # the child could not start the program
            for suffix in ("", "-wal", "-shm"):
                Path(str(o.output) + suffix).unlink(missing_ok=True)
            raise TtrecordError(exc[1])
        return result

    # -- while running -------------------------------------------------------------------

    def _drain(self, reader: LogReader, decoder: Decoder, writer: SessionWriter) -> None:
        decoder.feed(reader.read())
        events = decoder.ready()
        if events:
            writer.add(events)

    def _on_sigint(self, signum: int, frame: Any) -> None:
        self._interrupts.append(time.monotonic())

    def _handle_interrupts(self, proc: subprocess.Popen) -> None:
        """The child normally gets Ctrl-C itself (same process group); help it if it did not."""
        if not self._interrupts:
            return
        first = self._interrupts[0]
        waited = time.monotonic() - first
        if len(self._interrupts) >= 2 or waited > _INTERRUPT_GRACE + _KILL_GRACE:
            proc.kill()
        elif waited > _INTERRUPT_GRACE and len(self._interrupts) == 1:
            proc.send_signal(signal.SIGINT)
            self._interrupts.append(first)  # count the forwarded one; the next step is a kill

    def _stop(self, proc: subprocess.Popen) -> None:
        """Timeout: let the child flush its queued records, then kill it."""
        try:
            proc.send_signal(signal.SIGUSR1)
            time.sleep(0.1)
        except ProcessLookupError:
            pass
        proc.kill()

    # -- after the child is gone ---------------------------------------------------------

    def _finish(self, writer: SessionWriter, decoder: Decoder, returncode: int,
                hung: bool) -> RunResult:  # fmt: skip
        end = decoder.end
        exc = end.exception
        signal_number = -returncode if returncode < 0 else None
        error_type = error_message = tb = None
        if exc is not None:
            error_type, error_message, tb = exc
        if hung:
            status, exit_code = SessionStatus.HUNG, HUNG_EXIT_CODE
            signal_number = None
            last = decoder.close_open_calls(Status.HUNG)
        elif exc is not None and error_type == "KeyboardInterrupt":
            # The interrupt unwound through the open call (it may have landed in the
            # recorder's own bookkeeping around it): that call raised, the process lived on.
            status, exit_code = SessionStatus.INTERRUPTED, 130
            last = decoder.close_open_calls(Status.RAISED, error="KeyboardInterrupt")
        elif signal_number is not None:
            status = (SessionStatus.INTERRUPTED if signal_number == signal.SIGINT
                      else SessionStatus.CRASHED)  # fmt: skip
            exit_code = 128 + signal_number
            last = decoder.close_open_calls(Status.DIED)
        elif decoder.open_calls and end.exit_code is None:
            status, exit_code = SessionStatus.CRASHED, returncode  # os._exit inside a call
            last = decoder.close_open_calls(Status.DIED)
        else:
            # The program ended on its own; a call still open belongs to a daemon thread the
            # interpreter stopped at exit: it is kept (DIED) but is not what ended the run.
            status = SessionStatus.ERROR if exc is not None else SessionStatus.OK
            exit_code = (returncode or 1) if exc is not None else returncode
            decoder.close_open_calls(Status.DIED)
            last = None
        events = decoder.ready()
        if events:
            writer.add(events)
        writer.finish(
            status,
            exit_code=exit_code,
            signal=signal_number,
            error_type=error_type,
            error_message=error_message,
            traceback=tb,
            last_call=last,
        )
        return RunResult(self.options.output, status, exit_code, last, decoder.released)
