"""`ttrecord recover`: finish a session whose `ttrecord run` was killed before it could.

The supervisor writes the session from the event log as the program runs and deletes the log
only after the session's final status is written, so a session left `running` by a killed
supervisor still has its complete log beside it (`SESSION.db.log`). Recovery replays that log
from the start into a fresh session file (same id, program and options), closes the calls that
were still open as DIED, marks the session with why and where recording stopped, and replaces
the old file atomically. Without a log, the session is closed with what it already holds.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from ttrecord.errors import TtrecordError
from ttrecord.events import SessionStatus
from ttrecord.recorder.decode import Decoder
from ttrecord.recorder.log import LogReader
from ttrecord.store import liveness
from ttrecord.store.reader import Session, SessionInfo
from ttrecord.store.writer import SessionWriter


@dataclass(frozen=True)
class Recovered:
    path: Path
    status: SessionStatus
    events: int
    from_log: bool
    note: str


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
    log = liveness.log_path(p)
    if not os.access(p.parent, os.W_OK):
        raise TtrecordError(f"{p.parent}: cannot write here; copy the session and its log"
                            " to a writable folder and recover the copy")  # fmt: skip
    if log.exists():
        return _from_log(p, log, info)
    return _close_in_place(p)


def _from_log(p: Path, log: Path, info: SessionInfo) -> Recovered:
    from ttrecord.recorder.supervisor import end_status

    tmp = p.with_name(p.name + ".recovering")
    tmp.unlink(missing_ok=True)
    writer = SessionWriter(tmp)
    try:
        options = dict(info.options)
        writer.start(script=info.script, argv=info.argv, backend=info.backend,
                     backend_reason=info.backend_reason or "", ttnn_version=info.ttnn_version,
                     options=options, session_id=info.id, started_at=info.started_at,
                     pid=info.pid)  # fmt: skip
        decoder = Decoder()
        reader = LogReader(str(log))
        try:
            while True:
                decoder.feed(reader.read())
                events = decoder.ready()
                if events:
                    writer.add(events)
                if not reader.more:
                    break
        finally:
            reader.close()
        from ttrecord.native.recover import native_records  # a --native run's own logs

        native, native_logs = native_records(p, python_program=decoder.end.header is not None)
        decoder.feed(native)
        if decoder.end.header is not None:
            h = decoder.end.header
            writer.update_session(backend=h.backend, backend_reason=h.backend_reason,
                                  ttnn_version=h.ttnn_version, pid=h.pid)  # fmt: skip
        status, exit_code, signal_number, last = end_status(decoder, None)
        events = decoder.ready()
        if events:
            writer.add(events)
        note = _note(decoder.released)
        options["recording_stopped"] = note
        writer.update_session(options=json.dumps(options))
        exc = decoder.end.exception
        error_type, error_message, tb = (exc.type, exc.message, exc.traceback) if exc is not None \
            else (None, None, None)  # fmt: skip
        if status is not SessionStatus.OK and error_type is None:
            error_type, error_message = "RecordingStopped", note
        writer.finish(status, exit_code=exit_code, signal=signal_number, error_type=error_type,
                      error_message=error_message, traceback=tb, last_call=last)  # fmt: skip
    except BaseException:
        writer.close()
        tmp.unlink(missing_ok=True)
        raise
    writer.close()
    os.replace(tmp, p)
    for suffix in ("-wal", "-shm"):
        Path(str(p) + suffix).unlink(missing_ok=True)
    log.unlink(missing_ok=True)
    for path in native_logs:
        Path(path).unlink(missing_ok=True)
    return Recovered(p, status, decoder.released, True, note)


def _close_in_place(p: Path) -> Recovered:
    """No log: keep the events already stored and write an end."""
    from ttrecord.store.recovery import close_in_place

    count, note = close_in_place(
        p, lambda last: _note(last).replace("recovered", "its log is gone, kept what was stored")
    )
    return Recovered(p, SessionStatus.CRASHED, count, False, note)
