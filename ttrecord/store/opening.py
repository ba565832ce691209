"""How a reader opens a session file: read-only, from any place, and what it says about a
session whose recorder is gone."""

from __future__ import annotations

import os
import sqlite3
import stat
from pathlib import Path

from ttrecord.errors import SessionError
from ttrecord.store import liveness, schema


def require_regular_file(p: Path) -> None:
    """Refuse a FIFO, device or socket before anything opens it (opening a FIFO waits for a
    writer forever); raises SessionError."""
    try:
        mode = os.stat(p).st_mode
    except FileNotFoundError:
        raise SessionError(f"{p}: no such file") from None
    except OSError as exc:
        raise SessionError(f"{p}: cannot be read ({exc.strerror})") from None
    if stat.S_ISDIR(mode):
        raise SessionError(f"{p}: is a folder, not a session file")
    if not stat.S_ISREG(mode):
        raise SessionError(f"{p}: not a regular file (a FIFO, device or socket); not read")


def read_head(p: Path, size: int) -> bytes:
    """The first bytes of a regular file, never waiting on what is not one."""
    require_regular_file(p)
    fd = os.open(p, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):  # replaced since the check
            raise SessionError(f"{p}: not a regular file (a FIFO, device or socket); not read")
        return os.pread(fd, size, 0)
    finally:
        os.close(fd)


def harden(conn: sqlite3.Connection) -> None:
    """Nothing the file holds runs: no writes (so no trigger fires), no function of the file's
    schema (views, defaults) with side effects."""
    conn.execute("PRAGMA query_only = ON")
    conn.execute("PRAGMA trusted_schema = OFF")


def check_tables(p: Path, conn: sqlite3.Connection) -> None:
    """Each of ttrecord's table names must be a table: a view of the same name would run the
    file's own query (an endless one, say) when a reader reads it."""
    kinds = dict(conn.execute("SELECT name, type FROM sqlite_master WHERE type IN"
                              " ('table', 'view')").fetchall())  # fmt: skip
    for name in (*schema.TABLES, "findings_stamp", "run_summary"):
        if kinds.get(name, "table") != "table":
            raise SessionError(f"{p}: not a ttrecord session ({name} is a {kinds[name]},"
                               " not a table)")  # fmt: skip


def connect_read_only(p: Path) -> tuple[sqlite3.Connection, tuple | None, int]:
    """A read-only connection, the session row's (format, status) and the schema version.

    A session in a place the reader cannot write (another user's folder, a read-only mount, a
    CI artifact) is opened as immutable when a plain read-only open fails: SQLite would need to
    create or write the -shm file of a WAL-mode file, which a finished session is no longer."""
    uri = f"file:{p.resolve()}?mode=ro"
    for attempt in (uri, uri + "&immutable=1"):
        conn = sqlite3.connect(attempt, uri=True, check_same_thread=False)
        try:
            harden(conn)
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
            if "session" not in tables:
                conn.close()
                raise SessionError(f"{p}: not a ttrecord session (no session table)")
            try:
                check_tables(p, conn)
            except SessionError:
                conn.close()
                raise
            row = conn.execute("SELECT format, status FROM session").fetchone()
            return conn, row, version
        except sqlite3.OperationalError as exc:
            conn.close()
            text = str(exc)
            if attempt != uri or not ("readonly" in text or "unable to open" in text):
                raise
    raise AssertionError("unreachable")


def abnormal_message(p: Path, conn: sqlite3.Connection) -> str:
    """What every reader says about a session left `running` by a recorder that is gone."""
    try:
        last = conn.execute("SELECT max(seq) FROM events").fetchone()[0]
    except sqlite3.DatabaseError:
        last = None
    where = f"at event {last}" if last is not None else "before any event was stored"
    hint = (f"; `ttrecord recover {p}` finishes it from its log"
            if liveness.log_path(p).exists() else "")  # fmt: skip
    return f"recording stopped abnormally {where}: the ttrecord run recording it is gone{hint}"


def is_session_file(p: Path) -> bool:
    """Whether a file is a ttrecord session (its session row says so); never raises."""
    try:
        if read_head(p, 16) != b"SQLite format 3\x00":
            return False
        conn = sqlite3.connect(f"file:{p.resolve()}?mode=ro", uri=True)
        try:
            harden(conn)
            check_tables(p, conn)
            return bool(conn.execute("SELECT format FROM session").fetchone() == ("ttrecord-session",))
        finally:
            conn.close()
    except (OSError, sqlite3.Error, SessionError):
        return False


def disk_state(p: Path) -> tuple[str, int] | None:
    """(status, events) as a reader finds them in the file; None when it cannot be read."""
    try:
        require_regular_file(p)
        conn = sqlite3.connect(f"file:{p.resolve()}?mode=ro", uri=True)
    except (SessionError, OSError, sqlite3.Error):
        return None
    try:
        harden(conn)
        status = conn.execute("SELECT status FROM session").fetchone()
        events = conn.execute("SELECT count(*) FROM events").fetchone()
        if status is None or events is None:
            return None
        return str(status[0]), int(events[0])
    except sqlite3.Error:
        return None
    finally:
        conn.close()
