"""Absent values are stored as SQL NULL.

The writer registers an adapter for None so NULLs skip sqlite3's failing adapter lookup; the
value it binds must still be NULL (not 0, '' or the text 'None'), or every `IS NULL` query
of a reader would change meaning.
"""

import sqlite3

from ttrecord.events import SessionStatus
from ttrecord.store.writer import SessionWriter
from ttrecord.testing import SessionBuilder


def test_absent_fields_are_sql_null(tmp_path) -> None:
    b = SessionBuilder()
    b.open_device()
    x = b.alloc(1048704)
    b.op("ttnn.relu", [x], [x], line=11)
    writer = SessionWriter(tmp_path / "s.db")
    writer.start(script="model.py", argv=["model.py"], backend="emulator")
    writer.add(b.events)
    writer.finish(SessionStatus.OK, exit_code=0)
    writer.close()
    conn = sqlite3.connect(tmp_path / "s.db")
    # an op has no parent, error, region or buffer; a live buffer has no free_seq
    types = conn.execute(
        "SELECT typeof(parent), typeof(error), typeof(region), typeof(buffer)"
        " FROM events WHERE name = 'ttnn.relu'"
    ).fetchone()
    assert types == ("null", "null", "null", "null")
    assert conn.execute("SELECT typeof(free_seq) FROM buffers").fetchall() == [("null",)]
    assert conn.execute("SELECT count(*) FROM events WHERE parent IS NULL").fetchone()[0] == len(
        b.events
    )
    conn.close()
    # other connections in the process bind None as NULL too
    mem = sqlite3.connect(":memory:")
    assert mem.execute("SELECT typeof(?), ? IS NULL", (None, None)).fetchone() == ("null", 1)
    mem.close()
