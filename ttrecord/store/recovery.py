"""Ending a session in place whose recorder is gone and whose log is lost: the rows stored so
far are kept, and the session row says the recording stopped and why."""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path

from ttrecord.errors import SessionError


def close_in_place(p: Path, note_for: Callable[[int], str]) -> tuple[int, str]:
    """Mark the session crashed with the note `note_for(last seq)` and seal the file; returns
    (events stored, note). A damaged file raises SessionError."""
    conn = sqlite3.connect(p, isolation_level=None)
    try:
        last, count = conn.execute("SELECT max(seq), count(*) FROM events").fetchone()
        note = note_for(last or 0)
        options = json.loads(conn.execute("SELECT options FROM session").fetchone()[0] or "{}")
        options["recording_stopped"] = note
        conn.execute(
            "UPDATE session SET status = ?, ended_at = ?, error_type = coalesce(error_type, ?),"
            " error_message = coalesce(error_message, ?), options = ?",
            ("crashed", time.time(), "RecordingStopped", note, json.dumps(options)),
        )
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        conn.execute("PRAGMA journal_mode = DELETE")
    except sqlite3.DatabaseError as exc:
        raise SessionError(f"{p}: damaged or truncated session ({exc})") from None
    finally:
        conn.close()
    return count, note


def missing_from(rebuilt: Path, session: Path) -> int:
    """Events `session` holds that `rebuilt` does not (recovery replaces a session only with a
    file holding all of them)."""
    conn = sqlite3.connect(f"file:{rebuilt}?mode=ro", uri=True)
    try:
        conn.execute("ATTACH DATABASE ? AS old", (f"file:{session}?mode=ro",))
        return int(conn.execute("SELECT count(*) FROM old.events WHERE seq NOT IN"
                                " (SELECT seq FROM main.events)").fetchone()[0])  # fmt: skip
    except sqlite3.DatabaseError:
        return 1 << 62  # the session cannot be compared: keep it
    finally:
        conn.close()
