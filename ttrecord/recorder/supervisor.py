"""`ttrecord run`'s parent process: runs the program in a child and turns its log into a session.

The supervisor never imports ttnn. It starts the child, tails the child's log into the session
file in batches while the program runs, and when the child is gone decides how the run ended:

- ok: the program finished (any exit code; the code is kept);
- error: a Python exception escaped (type, message, traceback from the child's last record);
- crashed: the child died of a signal, or left through os._exit inside a ttnn call; the call
  still open is stored with Status.DIED and named in `session.last_call`;
- hung: `--timeout` expired; the child is stopped and the open call gets Status.HUNG;
- interrupted: Ctrl-C. The program gets KeyboardInterrupt once (a call it unwound through is
  stored as raised with that error); a second Ctrl-C gets the child killed. SIGTERM and
  SIGHUP sent to the supervisor are forwarded the same way (see signals.py).

The child never outlives the supervisor: it asks the kernel for SIGTERM when its parent dies
(PR_SET_PDEATHSIG). The supervisor holds a lock on the log while it records, so a session left
`running` by a supervisor that was killed is known to have stopped abnormally, and
`ttrecord recover` (or any reader) finishes it from the log. When the session cannot be
written (a full disk), recording stops, the program runs on and its exit code is kept.
"""

from __future__ import annotations

import dataclasses
import errno
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
from ttrecord.recorder import hot_path
from ttrecord.recorder.decode import Decoder
from ttrecord.recorder.log import LogReader
from ttrecord.recorder.pipeline import NativePipeline, open_pipeline
from ttrecord.recorder.signals import SignalRelay
from ttrecord.store import liveness, native
from ttrecord.store.opening import disk_state
from ttrecord.store.writer import SessionWriter

POLL_SECONDS = 0.02
HUNG_EXIT_CODE = 124  # as timeout(1)
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
    launch: dict[str, Any] | None = None  # rank, size, host, run id under a launcher (ttrecord.launch)


@dataclass(frozen=True)
class RunResult:
    path: Path
    status: SessionStatus
    exit_code: int
    last_call: int | None
    events: int
    stopped: str | None = None  # why recording stopped early (disk full, ...), if it did
    # what the session file holds: (status, events) read back from it; None: no readable file
    held: tuple[str, int] | None = None


class Supervisor:
    def __init__(self, options: RunOptions) -> None:
        self.options = options
        self._signals = SignalRelay()
        self._stored_options: dict[str, Any] = {}
        self._storage_error: str | None = None
        self._storage_reported = False
        self._failure: str | None = None  # ttrecord's own failure while recording
        self._no_session: str | None = None  # why no session file could be made
        self._lock_fd: int | None = None
        self._disk_full = False  # the last storage fault was a full disk (or a size limit)
        self._keep_log = False  # the session's end is only in the log
        self._pipeline: NativePipeline | None = None  # the C pipeline (store/native.py), if chosen

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
            "supervisor": os.getpid(),
            "hot_path": self._stored_options.get("hot_path"),
        }
        return [sys.executable, "-m", "ttrecord.recorder.child", json.dumps(config), *o.argv]

    def _recorder_options(self) -> dict[str, Any]:
        """What another recorder in the program stores in the session's options (`recover`
        rebuilds the session from the logs with them)."""
        return {}

    def _child_env(self) -> dict[str, str] | None:
        """The child's environment (None: this process's; the native recorder adds to it)."""
        return None

    def _open_log(self, log_path: Path) -> int:
        """Take the log's lock (refusing a session another run is recording) and empty it
        (refusing to touch a file of the same name that is not a ttrecord log)."""
        if log_path.exists() and not liveness.is_ttrecord_log(log_path):
            raise TtrecordError(f"{log_path} exists and is not a ttrecord event log;"
                                " move it or choose another session name")  # fmt: skip
        try:
            fd = liveness.lock_log(log_path)
        except BlockingIOError:
            raise TtrecordError(f"{self.options.output} is being recorded by another"
                                " `ttrecord run`") from None  # fmt: skip
        os.ftruncate(fd, 0)
        return fd

    def run(self) -> RunResult:
        o = self.options
        log_path = liveness.log_path(o.output)
        program = o.script if o.script is not None else f"-m {o.module}"
        self._stored_options = {
            "stack_depth": o.stack_depth, "audit_regions": list(o.audit_regions),
            "timeout": o.timeout, "backend_requested": o.backend, "callsites": o.callsites,
            "graph_capture": o.graph_capture, "verify_replay": o.verify_replay,
            "supervisor_pid": os.getpid(), **hot_path.decide(), **native.decide(),
            **self._recorder_options(),
        }  # fmt: skip
        if o.launch is not None:
            self._stored_options["launch"] = o.launch
        # A storage fault before the program starts does not stop it: it runs unrecorded (or
        # with its log only) and keeps its exit code; `run` says no session was written.
        lock_fd = None
        writer: SessionWriter | None = None
        try:
            lock_fd = self._open_log(log_path)
        except OSError as exc:
            self._no_session = f"cannot create the event log {log_path} ({exc.strerror or exc})"
        if lock_fd is not None:
            writer = self._start_writer(program)
        self._lock_fd = lock_fd
        if self._no_session is not None:
            self._storage_error = self._no_session
            print(f"ttrecord: recording stopped: {self._no_session}; the program runs"
                  " unrecorded", file=sys.stderr)  # fmt: skip
        decoder: Decoder | NativePipeline = self._pipeline or Decoder()
        reader = LogReader(os.fsencode(log_path))
        relay = self._signals
        relay.install()
        started = time.monotonic()
        hung = False
        result: RunResult | None = None
        returncode: int | None = None
        try:
            proc = subprocess.Popen(self._child_command(log_path), env=self._child_env())
            relay.block()
            header_seen = False
            while True:
                if self._failure is None:
                    try:
                        self._drain(reader, decoder, writer)
                        if not header_seen and decoder.end.header is not None:
                            header_seen = True
                            if writer is not None:
                                self._header(writer, decoder)
                            started = time.monotonic()  # the timeout counts from the start
                    except Exception as exc:  # ttrecord's own fault: the program runs on
                        self._fail(exc, log_path)
                relay.act(proc)
                if proc.poll() is not None:
                    break
                relay.wait(POLL_SECONDS)
                limit = (o.timeout or 0) if header_seen else (o.timeout or 0) + _STARTUP_GRACE
                if o.timeout is not None and time.monotonic() - started > limit:
                    hung = True
                    self._stop(proc)
                    break
            returncode = proc.wait()
            if writer is None:
                result = RunResult(o.output, SessionStatus.OK, _exit_code(returncode, hung),
                                   None, 0, self._no_session, held=None)  # fmt: skip
            elif self._failure is None:
                try:
                    result = self._end(reader, decoder, writer, log_path, returncode, hung,
                                       header_seen)  # fmt: skip
                except Exception as exc:
                    self._fail(exc, log_path)
            if result is None:
                assert writer is not None
                result = self._failed_end(writer, decoder, returncode, hung)
        finally:
            relay.restore()
            reader.close()
            try:
                if self._pipeline is not None:
                    self._pipeline.close()
                if writer is not None:
                    writer.close()
            except Exception:  # noqa: BLE001 - the session is as complete as it can be
                pass
            if (self._failure is None and not self._keep_log
                    and not os.environ.get("TTRECORD_KEEP_LOG")):  # fmt: skip
                log_path.unlink(missing_ok=True)
            if lock_fd is not None:
                os.close(lock_fd)  # releases the lock: the session is final
        if writer is not None:  # what the file holds, not what was meant to be stored
            held = disk_state(o.output)
            if held is None and o.output.exists():
                held = ("unreadable", 0)  # on disk, but this process cannot read it back
            result = dataclasses.replace(result, held=held)
        failure = decoder.end.exception
        if failure is not None and failure.type == "TtrecordError":  # the child could not start:
            # the session stays, marked failed with the reason, and names no backend
            raise TtrecordError(failure.message, result.exit_code)
        return result

    def _end(self, reader: LogReader, decoder: Decoder | NativePipeline, writer: SessionWriter,
             log_path: Path,
             returncode: int, hung: bool, header_seen: bool) -> RunResult:  # fmt: skip
        """The child is gone: store the rest of the log and the session's end."""
        self._drain(reader, decoder, writer)
        while reader.more:
            self._drain(reader, decoder, writer)
        if not header_seen and decoder.end.header is not None:
            self._header(writer, decoder)
        if self._storage_error is not None and self._disk_full:
            reader.close()
            self._free_log(log_path)  # frees the disk for the session's last rows
        return self._finish(writer, decoder, returncode, hung)

    def _free_log(self, log_path: Path) -> None:
        """Delete the log and give its blocks back now (the child is gone; the lock's
        descriptor would otherwise keep them until the end)."""
        if self._lock_fd is not None:
            try:
                os.ftruncate(self._lock_fd, 0)
            except OSError:
                pass
        log_path.unlink(missing_ok=True)

    def _start_writer(self, program: str) -> SessionWriter | None:
        """The session file with its `running` row, or None (and the reason kept) when it
        cannot be written; a half-made file is removed."""
        o = self.options
        writer = None
        try:
            writer = SessionWriter(o.output)
            self._open_pipeline(o.output)
            writer.start(script=program, argv=[o.script or o.module or "", *o.argv],
                         backend=o.backend, options=self._stored_options)  # fmt: skip
            return writer
        except (OSError, sqlite3.Error) as exc:
            self._no_session = f"cannot write {o.output} ({exc})"
            if self._pipeline is not None:
                self._pipeline.close()
                self._pipeline = None
            if writer is not None:
                try:
                    writer.close()
                except (OSError, sqlite3.Error):
                    pass
            for suffix in ("", "-wal", "-shm", "-journal"):
                Path(str(o.output) + suffix).unlink(missing_ok=True)
            return None

    def _open_pipeline(self, path: Path) -> None:
        """The C pipeline on the session SessionWriter just made, when it was chosen; a
        connection it cannot open leaves the Python path, and the session says why."""
        if self._stored_options.get("pipeline") != native.C:
            return
        try:
            self._pipeline = open_pipeline(path)
        except (OSError, sqlite3.Error) as exc:
            self._stored_options.update(pipeline=native.PYTHON,
                                        pipeline_reason=f"the C pipeline did not open ({exc})")

    def _fail(self, exc: BaseException, log_path: Path) -> None:
        """ttrecord itself failed while the program runs: stop storing, keep the log (the
        events not stored are there), say so once; the program is left alone."""
        self._failure = (f"ttrecord failed ({type(exc).__name__}: {exc}); the event log is"
                         f" kept at {log_path}")  # fmt: skip
        print(f"ttrecord: recording stopped: {self._failure}; the program continues"
              " unrecorded", file=sys.stderr)  # fmt: skip

    def _failed_end(self, writer: SessionWriter, decoder: Decoder | NativePipeline,
                    returncode: int, hung: bool) -> RunResult:  # fmt: skip
        """The end of a run whose recording failed: the program's own exit code, and as much
        of the session's end as can still be written."""
        exit_code = _exit_code(returncode, hung)
        status = SessionStatus.HUNG if hung else (
            SessionStatus.CRASHED if returncode < 0 else SessionStatus.OK)  # fmt: skip
        reason = self._failure or "ttrecord failed"
        if isinstance(decoder, NativePipeline):
            decoder.close()  # its connection would keep the file in WAL mode
        try:
            self._stored_options["recording_stopped"] = reason
            writer.update_session(options=json.dumps(self._stored_options), status=str(status),
                                  ended_at=time.time(), exit_code=exit_code,
                                  signal=-returncode if returncode < 0 else None)  # fmt: skip
            writer.seal()
        except Exception:  # noqa: BLE001 - the log is kept; `ttrecord recover` finishes it
            pass
        return RunResult(self.options.output, status, exit_code, None, decoder.released, reason)

    def _header(self, writer: SessionWriter, decoder: Decoder | NativePipeline) -> None:
        h = decoder.end.header
        self._write(writer.update_session, backend=h.backend, backend_reason=h.backend_reason,
                    ttnn_version=h.ttnn_version, pid=h.pid)  # fmt: skip

    # -- while running -------------------------------------------------------------------

    def _drain(self, reader: LogReader, decoder: Decoder | NativePipeline,
               writer: SessionWriter | None) -> None:  # fmt: skip
        if isinstance(decoder, NativePipeline):  # read, decoded and written in one pass
            decoder.read(reader)
            if writer is not None and self._storage_error is None:
                self._write(decoder.write_ready)
            else:
                decoder.drop_ready()
            return
        decoder.feed(reader.read())  # always: how the program ended is in the last records
        events = decoder.ready()
        if events and writer is not None and self._storage_error is None:  # else it cannot
            self._write(writer.add, events)

    def _write(self, method: Any, *args: Any, **kwargs: Any) -> bool:
        """Call a writer method; a storage fault (full disk, I/O error) stops recording."""
        if self._storage_error is not None:
            return False
        try:
            method(*args, **kwargs)
            return True
        except (sqlite3.Error, OSError) as exc:
            self._disk_full = _is_disk_full(exc)
            self._storage_error = f"cannot write {self.options.output} ({exc})"
            if not self._storage_reported:
                self._storage_reported = True
                print(f"ttrecord: recording stopped: {self._storage_error}; the program"
                      " continues unrecorded", file=sys.stderr)  # fmt: skip
            return False

    def _stop(self, proc: subprocess.Popen) -> None:
        """Timeout: kill the child. Every call's begin and end is in the log already (ends are
        written when a call returns), so nothing is left to flush."""
        proc.kill()

    # -- after the child is gone ---------------------------------------------------------

    def _finish(self, writer: SessionWriter, decoder: Decoder | NativePipeline, returncode: int,
                hung: bool) -> RunResult:  # fmt: skip
        status, exit_code, signal_number, last = end_status(decoder, returncode, hung)
        if self._signals.killed and self._signals.interrupted and not hung:
            status, exit_code = SessionStatus.INTERRUPTED, 130  # a second Ctrl-C killed it
        stopped = decoder.end.stopped or self._storage_error
        if decoder.end.header is None and not stopped:  # the child could not write its log
            stopped = ("no record reached the event log (it could not be written; the program"
                       " ran unrecorded, see its stderr)")  # fmt: skip
        error_type = error_message = tb = None
        exc = decoder.end.exception
        if exc is not None:
            error_type, error_message, tb = exc.type, exc.message, exc.traceback
            if exc.type == "TtrecordError":  # no backend loaded: never named after the request
                self._write(writer.update_session, backend="none", backend_reason=exc.message)
        events = decoder.ready() if isinstance(decoder, Decoder) else []
        self._storage_error = None  # the log is gone: try to store what is left and the end
        ended = False
        if stopped:  # the status first, while a small write still fits (indexes may not)
            self._stored_options["recording_stopped"] = stopped
            ended = self._write(writer.update_session, options=json.dumps(self._stored_options),
                                status=str(status), ended_at=time.time(), exit_code=exit_code,
                                signal=signal_number)  # fmt: skip
            self._storage_error = None
        if events:
            self._write(writer.add, events)
        if isinstance(decoder, NativePipeline):
            self._write(decoder.write_ready)
            decoder.close()  # SessionWriter finishes the file alone (its journal mode changes)
        fields = dict(exit_code=exit_code, signal=signal_number, error_type=error_type,
                      error_message=error_message, traceback=tb, last_call=last)  # fmt: skip
        if self._write(writer.finish, status, **fields):
            ended = True
        else:
            self._storage_error = None  # at least the status and the exit code
            ended = self._write(writer.update_session, status=str(status), ended_at=time.time(),
                                exit_code=exit_code, signal=signal_number) or ended  # fmt: skip
        log = liveness.log_path(self.options.output)
        if not ended and log.exists():  # the end is in the log: keep it for `recover`
            self._keep_log = True
            stopped = (f"{stopped or 'the session could not be written'}; its end could not be"
                       f" written either: the event log is kept at {log}, `ttrecord recover"
                       f" {self.options.output}` finishes the session once it can be"
                       " written")  # fmt: skip
        return RunResult(self.options.output, status, exit_code, last, decoder.released,
                         stopped)  # fmt: skip


def _is_disk_full(exc: BaseException) -> bool:
    """A fault that freeing space cures (SQLite says "full" for ENOSPC and EFBIG)."""
    if isinstance(exc, OSError):
        return exc.errno in (errno.ENOSPC, errno.EFBIG, errno.EDQUOT)
    return "full" in str(exc)


def _exit_code(returncode: int, hung: bool) -> int:
    """The program's exit code as the shell reports it (128+N for signal N)."""
    if hung:
        return HUNG_EXIT_CODE
    return returncode if returncode >= 0 else 128 - returncode


def end_status(decoder: Decoder | NativePipeline, returncode: int | None,
               hung: bool = False) -> tuple[SessionStatus, int, int | None, int | None]:  # fmt: skip
    """How the run ended: (status, exit code, signal, seq of the call it ended in); closes the
    calls still open. `returncode` is None when the child's end was not seen (recovery): a
    child that wrote its exit record ended on its own, any other was stopped mid-run."""
    end = decoder.end
    exc = end.exception
    error_type = exc.type if exc is not None else None
    if returncode is None:
        returncode = end.exit_code if end.exit_code is not None else -signal.SIGKILL
    signal_number = -returncode if returncode < 0 else None
    if hung:
        last = decoder.close_open_calls(Status.HUNG)
        return SessionStatus.HUNG, HUNG_EXIT_CODE, None, last
    if error_type == "KeyboardInterrupt":
        # The interrupt unwound through the open call (it may have landed in the recorder's
        # own bookkeeping around it): that call raised, the process lived on.
        last = decoder.close_open_calls(Status.RAISED, error="KeyboardInterrupt")
        return SessionStatus.INTERRUPTED, 130, signal_number, last
    if signal_number is not None:
        status = (SessionStatus.INTERRUPTED if signal_number == signal.SIGINT
                  else SessionStatus.CRASHED)  # fmt: skip
        return status, 128 + signal_number, signal_number, decoder.close_open_calls(Status.DIED)
    if decoder.open_calls and end.exit_code is None and end.stopped is None:
        last = decoder.close_open_calls(Status.DIED)  # os._exit inside a call
        return SessionStatus.CRASHED, returncode, None, last
    # The program ended on its own; a call still open belongs to a daemon thread the
    # interpreter stopped at exit, or was running when the log stopped (a full disk): it is
    # kept (DIED) but is not what ended the run.
    decoder.close_open_calls(Status.DIED)
    if exc is not None:
        return SessionStatus.ERROR, returncode or 1, None, None
    return SessionStatus.OK, returncode, None, None
