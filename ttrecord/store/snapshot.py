"""An indexed copy of a session that has no indexes yet, so a reader's work stays bounded.

A session gets its indexes when its recording finishes (building them while recording would
slow every insert). A session still being recorded, or one whose recorder was killed, has
none, and the readers' set-based queries then scan a table once per row: minutes instead of
a second at a few hundred thousand events. Copying the file once (SQLite's backup API, a
consistent snapshot even while the recorder writes) and indexing the copy costs a few table
passes and disk space equal to the file; the copy is unlinked as soon as it is open, so
nothing is left behind whatever happens to the reader.
"""

from __future__ import annotations

import os
import sqlite3
import tempfile
from pathlib import Path

import sqlite_utils

from ttrecord.errors import SessionError
from ttrecord.store import schema
from ttrecord.store.opening import check_tables, harden


def index_name(table: str, columns: list[str]) -> str:
    """The name sqlite-utils gives the index `create_indexes` makes."""
    return f"idx_{table}_{'_'.join(columns)}"


def missing_indexes(conn: sqlite3.Connection) -> list[str]:
    """Names of ttrecord's indexes the file does not have (all of them while recording)."""
    have = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    return [index_name(t, c) for t, c in schema.INDEXES
            if t in tables and index_name(t, c) not in have]  # fmt: skip


def indexed_copy(conn: sqlite3.Connection) -> sqlite3.Connection | None:
    """A read-only connection to an indexed copy of `conn`'s database, or None when the copy
    cannot be made (no space in the temp folder, say): the reader then reads the original,
    slowly but correctly."""
    try:
        fd, name = tempfile.mkstemp(prefix="ttrecord-snapshot-", suffix=".db")
    except OSError:
        return None
    os.close(fd)
    path = Path(name)
    try:
        dest = sqlite3.connect(path)
        try:
            conn.backup(dest)
            dest.execute("PRAGMA trusted_schema = OFF")
            schema.create_indexes(sqlite_utils.Database(dest))  # the writer's own indexes
            dest.commit()
        finally:
            dest.close()
        copy = sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True, check_same_thread=False)
        harden(copy)
        check_tables(path, copy)
        return copy
    except (sqlite3.Error, OSError, ValueError, SessionError):
        return None
    finally:
        path.unlink(missing_ok=True)
