"""`ttrecord recover`: finish a session whose `ttrecord run` was killed before it could.

The supervisor writes the session from the event log as the program runs and deletes the log
only after the session's final status is written, so a session left `running` by a killed
supervisor still has its complete log beside it (`SESSION.db.log`). Recovery replays that log
from the start into a fresh session file (same id, program and options), closes the calls that
were still open as DIED, marks the session with why and where recording stopped, and replaces
the old file atomically. Without a log, the session is closed with what it already holds.

A log can be damaged (a disk error, a copy cut short, a file from elsewhere). Frames that do
not decode are dropped and reported with their offsets, and the rebuilt file replaces the
session only if it holds every event the session holds; otherwise the session is closed in
place with what it holds. So recovery never leaves a session with fewer events. Decoding runs
under an address-space limit in proportion to the log's size, so a record claiming an
impossible size is a dropped frame, not gigabytes of memory.
"""

from __future__ import annotations

import json
import os
import resource
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from ttrecord.errors import TtrecordError
from ttrecord.events import SessionStatus
from ttrecord.recorder.decode import Decoder
from ttrecord.recorder.log import LogReader
from ttrecord.store import liveness
from ttrecord.store.opening import is_session_file
from ttrecord.store.reader import Session, SessionInfo
from ttrecord.store.recovery import missing_from
from ttrecord.store.writer import SessionWriter


@dataclass(frozen=True)
class Recovered:
    path: Path
    status: SessionStatus
    events: int
    from_log: bool
    note: str
    unreadable: list[tuple[int, int]] = field(default_factory=list)  # (offset, bytes) dropped
    kept: bool = False  # the damaged log held less than the session: the session was kept


def _note(events: int) -> str:
    return (f"recording stopped abnormally at event {events}: the ttrecord run recording it"
            " was killed; recovered")  # fmt: skip


def recover(path: str | os.PathLike[str]) -> Recovered:
    """Finish a session left `running`; raises TtrecordError when there is nothing to do."""
    p = Path(path)
    with Session.open(p) as session:
        if session.abnormal is None:
            info = session.info()
            if info.status == "running":
                raise TtrecordError(f"{p} is being recorded right now; nothing to recover")
            raise TtrecordError(f"{p} is finished ({info.status}); nothing to recover")
        info = session.info()
    if info.pid and _program_still_running(info.pid):
        raise TtrecordError(f"{p}: the recorded program (pid {info.pid}) is still running;"
                            " recover the session after it ends")  # fmt: skip
    log = liveness.log_path(p)
    if not os.access(p.parent, os.W_OK):
        raise TtrecordError(f"{p.parent}: cannot write here; copy the session and its log"
                            " to a writable folder and recover the copy")  # fmt: skip
    if log.is_file() and not log.is_symlink():  # never a FIFO (it would wait) or a link
        return _from_log(p, log, info)
    return _close_in_place(p)


def _program_still_running(pid: int) -> bool:
    """Whether the recorded program outlived its `ttrecord run` (it ignored the SIGTERM sent
    when the supervisor died) and may still append to the log."""
    try:
        with open(f"/proc/{int(pid)}/cmdline", "rb") as fh:
            return b"ttrecord.recorder.child" in fh.read()
    except (OSError, ValueError, OverflowError):
        return False


_BASE_BUDGET = 1 << 30  # address space recovery may take beyond its start, plus 32x the log


def _vm_size() -> int | None:
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmSize:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        pass
    return None


@contextmanager
def _memory_bounded(log_size: int) -> Iterator[None]:
    """Cap this process's address space while the log is decoded: a record claiming a list
    of 2**31 items fails to allocate (MemoryError: the frame is dropped) instead of taking
    the machine's memory."""
    current = _vm_size()
    try:
        old = resource.getrlimit(resource.RLIMIT_AS)
    except (OSError, ValueError):
        old = None
    if current is None or old is None:
        yield
        return
    limit = current + _BASE_BUDGET + 32 * log_size
    if old[1] != resource.RLIM_INFINITY:
        limit = min(limit, old[1])
    if old[0] != resource.RLIM_INFINITY:
        limit = min(limit, old[0])
    try:
        resource.setrlimit(resource.RLIMIT_AS, (limit, old[1]))
    except (OSError, ValueError):
        yield
        return
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, old)


def dropped_summary(unreadable: list[tuple[int, int]]) -> str:
    shown = ", ".join(str(offset) for offset, _ in unreadable[:8])
    more = f" and {len(unreadable) - 8} more" if len(unreadable) > 8 else ""
    total = sum(size for _, size in unreadable)
    return (f"{len(unreadable)} unreadable (dropped, {total} bytes) at offset"
            f"{'s' if len(unreadable) > 1 else ''} {shown}{more}")


def _from_log(p: Path, log: Path, info: SessionInfo) -> Recovered:
    from ttrecord.recorder.supervisor import end_status

    tmp = p.with_name(p.name + ".recovering")
    if os.path.lexists(tmp) and (tmp.is_symlink() or not is_session_file(tmp)):
        raise TtrecordError(f"{tmp} exists and is not a file ttrecord made; move it")
    tmp.unlink(missing_ok=True)
    writer = SessionWriter(tmp)
    reader = LogReader(os.fsencode(log))
    try:
        options = dict(info.options)
        writer.start(script=info.script, argv=info.argv, backend=info.backend,
                     backend_reason=info.backend_reason or "", ttnn_version=info.ttnn_version,
                     options=options, session_id=info.id, started_at=info.started_at,
                     pid=info.pid)  # fmt: skip
        decoder = Decoder()
        bad_records = 0
        try:
            with _memory_bounded(os.path.getsize(log)):
                while True:
                    for record in _well_formed(reader.read()):
                        try:
                            decoder.feed((record,))
                        except (ValueError, TypeError, KeyError, AttributeError):
                            bad_records += 1  # decodes, but not into a record
                    events = decoder.ready()
                    if events:
                        writer.add(events)
                    if not reader.more:
                        break
        finally:
            reader.close()
        from ttrecord.native.recover import native_records  # a --native run's own logs

        native, native_logs = native_records(p, python_program=decoder.end.header is not None,
                                             missing=info.options.get("native_missing", ()))
        decoder.feed(native)
        unreadable = list(reader.unreadable)
        if not reader.broken:  # the committed end past the last record read: a cut file
            last_read = reader.truncated_at
            if reader.committed > last_read:
                unreadable.append((last_read, reader.committed - last_read))
        if decoder.end.header is not None:
            h = decoder.end.header
            writer.update_session(backend=h.backend, backend_reason=h.backend_reason,
                                  ttnn_version=h.ttnn_version, pid=h.pid)  # fmt: skip
        status, exit_code, signal_number, last = end_status(decoder, None)
        events = decoder.ready()
        if events:
            writer.add(events)
        note = _note(decoder.released)
        if bad_records:
            note += f"; {bad_records} malformed records dropped"
        if unreadable:
            note += f"; the log was damaged: {dropped_summary(unreadable)}"
        options["recording_stopped"] = note
        writer.update_session(options=json.dumps(options))
        exc = decoder.end.exception
        error_type, error_message, tb = (exc.type, exc.message, exc.traceback) if exc is not None \
            else (None, None, None)  # fmt: skip
        if status is not SessionStatus.OK and error_type is None:
            error_type, error_message = "RecordingStopped", note
        writer.finish(status, exit_code=exit_code, signal=signal_number, error_type=error_type,
                      error_message=error_message, traceback=tb, last_call=last)  # fmt: skip
    except (KeyboardInterrupt, SystemExit, TtrecordError):
        writer.close()
        tmp.unlink(missing_ok=True)
        raise
    except Exception as exc:  # a log that decodes into nonsense: the session stays as it is
        writer.close()
        tmp.unlink(missing_ok=True)
        kept = _close_in_place(p, f"its log is unreadable ({type(exc).__name__}), kept what"
                                  " was stored")  # fmt: skip
        return Recovered(p, kept.status, kept.events, False, kept.note, list(reader.unreadable),
                         kept=True)  # fmt: skip
    writer.close()
    if missing_from(tmp, p):
        # The log holds less than the session (damaged, cut, replaced): keep the session.
        tmp.unlink(missing_ok=True)
        damage = dropped_summary(unreadable) if unreadable else "no record of them"
        kept = _close_in_place(p, f"its log lacks events the session holds ({damage}), kept"
                                  " what was stored")  # fmt: skip
        return Recovered(p, kept.status, kept.events, False, kept.note, unreadable, kept=True)
    os.replace(tmp, p)
    for suffix in ("-wal", "-shm"):
        Path(str(p) + suffix).unlink(missing_ok=True)
    log.unlink(missing_ok=True)
    for path in native_logs:
        Path(path).unlink(missing_ok=True)
    return Recovered(p, status, decoder.released, True, note, unreadable)


def _well_formed(records: Iterator[object]) -> Iterator[tuple]:
    """Records that are tuples with a known tag and the right number of fields (a damaged
    frame can decode into anything)."""
    from ttrecord.recorder.records import RECORDS

    for record in records:
        if type(record) is tuple and record and record[0] in RECORDS:
            try:
                RECORDS[record[0]]._make(record)
            except TypeError:
                continue
            yield record


def _close_in_place(p: Path, why: str = "its log is gone, kept what was stored") -> Recovered:
    """No usable log: keep the events already stored and write an end."""
    from ttrecord.store.recovery import close_in_place

    count, note = close_in_place(p, lambda last: _note(last).replace("recovered", why))
    return Recovered(p, SessionStatus.CRASHED, count, False, note)
