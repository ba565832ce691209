"""How a reader opens a session file: read-only, from any place, and what it says about a
session whose recorder is gone."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from ttrecord.errors import SessionError
from ttrecord.store import liveness


def connect_read_only(p: Path) -> tuple[sqlite3.Connection, tuple | None, int]:
    """A read-only connection, the session row's (format, status) and the schema version.

    A session in a place the reader cannot write (another user's folder, a read-only mount, a
    CI artifact) is opened as immutable when a plain read-only open fails: SQLite would need to
    create or write the -shm file of a WAL-mode file, which a finished session is no longer."""
    uri = f"file:{p.resolve()}?mode=ro"
    for attempt in (uri, uri + "&immutable=1"):
        conn = sqlite3.connect(attempt, uri=True, check_same_thread=False)
        try:
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
            if "session" not in tables:
                conn.close()
                raise SessionError(f"{p}: not a ttrecord session (no session table)")
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
        with p.open("rb") as fh:
            if fh.read(16) != b"SQLite format 3\x00":
                return False
        conn = sqlite3.connect(f"file:{p.resolve()}?mode=ro", uri=True)
        try:
            return bool(conn.execute("SELECT format FROM session").fetchone() == ("ttrecord-session",))
        finally:
            conn.close()
    except (OSError, sqlite3.Error):
        return False
