"""The SQL of the ttnn-visualizer export: the session rows it reads and the TT-NN report
database it writes (`export/visualizer.py` decides what maps to what).

Nothing is held per event, per tensor or per buffer in Python: the session is read as narrow
streamed rows, and what the export must remember until the end (every tensor it saw, which
operation read or wrote which, the call each operation's buffer snapshot is taken after) goes
to scratch tables in SQLite's temporary database, which lives beside the output, not in it, and
spills to disk beyond a few MB. So the export's memory stays flat whatever the session's size,
and the output file gets the same rows in the same order as an in-memory export would write.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

from ttrecord.events import CALL_KINDS, Kind
from ttrecord.store.ttnn_report_schema import SCHEMA

if TYPE_CHECKING:
    from ttrecord.store.reader import Session

# Calls that are not operations in the TT-NN report sense.
_OPERATION_KINDS = ", ".join(
    f"'{k}'" for k in sorted(CALL_KINDS - {Kind.DEVICE_OPEN, Kind.DEVICE_CLOSE})
)
_CALLS_SQL = (
    "SELECT e.seq, e.kind, e.name, e.phase, e.t_ns, e.dur_ns, e.trace, e.callsite, e.status,"
    " e.error, e.args, max(e.seq, coalesce((SELECT max(c.seq) FROM events c WHERE c.parent = e.seq),"
    " e.seq)),"
    " (SELECT json_group_array(json_array(t.role, t.pos, t.tensor_id, t.storage, t.shape,"
    " t.dtype, t.layout, t.memory_config, t.device, t.buffer_type, t.address, t.size))"
    f" FROM tensors t WHERE t.seq = e.seq) FROM events e WHERE e.parent IS NULL AND e.kind IN"
    f" ({_OPERATION_KINDS}) ORDER BY e.seq"
)
_SCRATCH = """
CREATE TEMP TABLE ttrecord_tensors (key TEXT PRIMARY KEY, recorded INTEGER, shape TEXT,
    dtype TEXT, layout TEXT, memory_config TEXT, device_id INTEGER, address INTEGER,
    buffer_type INTEGER);
CREATE TEMP TABLE ttrecord_io (input INTEGER, operation_id INTEGER, idx INTEGER, key TEXT);
CREATE TEMP TABLE ttrecord_ops (operation_id INTEGER PRIMARY KEY, until INTEGER);
CREATE TEMP TABLE ttrecord_sharded (seq INTEGER, device INTEGER, buffer_type TEXT,
    address INTEGER, layout TEXT);
"""
_BATCH = 5000


class CallRow(tuple):
    """A top-level call as the export reads it (see `call_rows`)."""

    __slots__ = ()
    seq = property(lambda self: self[0])
    kind = property(lambda self: self[1])
    name = property(lambda self: self[2])
    phase = property(lambda self: self[3])
    t_ns = property(lambda self: self[4])
    dur_ns = property(lambda self: self[5])
    trace = property(lambda self: self[6])
    callsite = property(lambda self: self[7])
    status = property(lambda self: self[8])
    error = property(lambda self: self[9])
    args = property(lambda self: self[10])  # JSON text or None
    until = property(lambda self: self[11])  # seq of its last nested event (itself if none)
    tensors = property(lambda self: self[12])  # JSON list, see `TENSOR_FIELDS`


# The fields of each item of `CallRow.tensors`, in order.
TENSOR_FIELDS = ("role", "pos", "tensor_id", "storage", "shape", "dtype", "layout",
                 "memory_config", "device", "buffer_type", "address", "size")  # fmt: skip


def call_rows(session: Session) -> Iterator[CallRow]:
    """Every top-level call that is an operation (not a device open or close), in seq order,
    streamed."""
    return map(CallRow, session.query_iter(_CALLS_SQL))


def first_t_ns(session: Session) -> int | None:
    rows = session.query("SELECT t_ns FROM events ORDER BY seq LIMIT 1")
    return rows[0][0] if rows else None


def buffer_devices(session: Session) -> set[int]:
    """Every device a buffer was on."""
    return {d for (d,) in session.query("SELECT DISTINCT device FROM buffers")}


def buffer_starts(session: Session) -> Iterator[tuple[int, int, str, int, int, int]]:
    """(id, device, buffer type, address, size, alloc seq) of every buffer, by allocation."""
    return session.query_iter(
        "SELECT id, device, buffer_type, address, size, alloc_seq FROM buffers"
        " ORDER BY alloc_seq, id"
    )


def buffer_ends(session: Session) -> Iterator[tuple[int, int]]:
    """(id, free seq) of every freed buffer, by free seq."""
    return session.query_iter(
        "SELECT id, free_seq FROM buffers WHERE free_seq IS NOT NULL ORDER BY free_seq, alloc_seq, id"
    )


class ReportDatabase:
    """A TT-NN report database being written, with its scratch tables."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.conn = sqlite3.connect(path)
        self.conn.executescript(SCHEMA)
        self.conn.executescript(_SCRATCH)
        self._io: list[tuple[int, int, int, str]] = []
        self._keys: list[tuple[Any, ...]] = []

    def close(self, commit: bool) -> None:
        if commit:
            self.conn.commit()
        self.conn.close()

    # -- operations ------------------------------------------------------------------------

    def add_operation(self, op_id: int, name: str, duration: float | None, until: int,
                      arguments: list[tuple[str, str]]) -> None:  # fmt: skip
        self.conn.execute("INSERT INTO operations VALUES (?,?,?)", (op_id, name, duration))
        self.conn.executemany("INSERT INTO operation_arguments VALUES (?,?,?)",
                              [(op_id, k, v) for k, v in arguments])  # fmt: skip
        self.conn.execute("INSERT INTO temp.ttrecord_ops VALUES (?, ?)", (op_id, until))

    def add_source(self, source_id: int, file: str, text: str) -> None:
        self.conn.execute("INSERT INTO source_files VALUES (?,?,?)", (source_id, file, text))

    def add_stack_trace(self, op_id: int, text: str, source_id: int | None) -> None:
        self.conn.execute("INSERT INTO stack_traces VALUES (?,?,?)", (op_id, text, source_id))

    def add_error(self, op_id: int, name: str, kind: str, message: str, stack: str | None,
                  stamp: str) -> None:  # fmt: skip
        self.conn.execute("INSERT INTO errors VALUES (?,?,?,?,?,?)",
                          (op_id, name, kind, message, stack, stamp))  # fmt: skip

    # -- tensors -----------------------------------------------------------------------------

    def note_tensor(self, key: str, recorded: int | None, row: tuple[Any, ...]) -> None:
        """A tensor seen (first sighting of `key` counts); `row` is its report row without
        the id: (shape, dtype, layout, memory config, device id, address, buffer type)."""
        self._keys.append((key, recorded, *row))
        if len(self._keys) >= _BATCH:
            self._flush()

    def note_io(self, is_input: bool, op_id: int, index: int, key: str) -> None:
        self._io.append((int(is_input), op_id, index, key))
        if len(self._io) >= _BATCH:
            self._flush()

    def note_sharded(self, seq: int, device: int, buffer_type: str, address: int,
                     layout: str) -> None:  # fmt: skip
        self.conn.execute("INSERT INTO temp.ttrecord_sharded VALUES (?,?,?,?,?)",
                          (seq, device, buffer_type, address, layout))  # fmt: skip

    def _flush(self) -> None:
        self.conn.executemany(
            "INSERT OR IGNORE INTO temp.ttrecord_tensors VALUES (?,?,?,?,?,?,?,?,?)", self._keys
        )
        self.conn.executemany("INSERT INTO temp.ttrecord_io VALUES (?,?,?,?)", self._io)
        self._keys.clear()
        self._io.clear()

    def write_tensors(self) -> int:
        """Give every tensor its report id and write `tensors`, then `input_tensors` and
        `output_tensors`: ttnn's own id for the first tensor that has it, fresh ids (above
        every recorded one) for the rest, in the order the tensors were first seen."""
        self._flush()
        fresh = self.conn.execute(
            "SELECT coalesce(max(recorded), -1) + 1 FROM temp.ttrecord_tensors"
        ).fetchone()[0]
        # (not executescript: it would commit the output half-written)
        self.conn.execute(
            "CREATE TEMP TABLE ttrecord_ids AS SELECT key, CASE WHEN keep THEN recorded"
            f" ELSE {int(fresh)} + sum(NOT keep) OVER (ORDER BY r ROWS UNBOUNDED PRECEDING) - 1"
            " END AS id FROM (SELECT rowid AS r, key, recorded, recorded IS NOT NULL AND"
            " row_number() OVER (PARTITION BY recorded ORDER BY rowid) = 1 AS keep"
            " FROM temp.ttrecord_tensors)"
        )
        self.conn.execute("CREATE UNIQUE INDEX temp.ttrecord_ids_key ON ttrecord_ids (key)")
        n = 0
        rows = self.conn.execute(
            "SELECT i.id, t.shape, t.dtype, t.layout, t.memory_config, t.device_id, t.address,"
            " t.buffer_type FROM temp.ttrecord_tensors t JOIN temp.ttrecord_ids i ON i.key = t.key"
            " ORDER BY t.rowid"
        )
        writer = self.conn.cursor()
        while batch := rows.fetchmany(_BATCH):
            writer.executemany("INSERT INTO tensors VALUES (?,?,?,?,?,?,?,?)", batch)
            n += len(batch)
        io = self.conn.execute(
            "SELECT o.input, o.operation_id, o.idx, i.id FROM temp.ttrecord_io o"
            " JOIN temp.ttrecord_ids i ON i.key = o.key ORDER BY o.rowid"
        )
        while batch := io.fetchmany(_BATCH):
            # In the order seen, one table after the other as they alternate: the same rows
            # in the same order as writing each when it was seen.
            run: list[tuple[int, int, int]] = []
            table = None
            for is_input, op_id, index, tid in batch:
                name = "input_tensors" if is_input else "output_tensors"
                if name != table and run:
                    writer.executemany(f"INSERT INTO {table} VALUES (?,?,?)", run)
                    run = []
                table = name
                run.append((op_id, index, tid))
            if run:
                writer.executemany(f"INSERT INTO {table} VALUES (?,?,?)", run)
        return n

    # -- buffers -----------------------------------------------------------------------------

    def operations(self) -> Iterator[tuple[int, int]]:
        """(operation id, seq of its last nested event) of every operation, in order."""
        return _rows(self.conn.execute(
            "SELECT operation_id, until FROM temp.ttrecord_ops ORDER BY operation_id"
        ))

    def sharded(self) -> Iterator[tuple[int, int, str, int, str]]:
        """(seq, device, buffer type, address, layout) of the sharded tensors seen, in order."""
        return _rows(self.conn.execute(
            "SELECT seq, device, buffer_type, address, layout FROM temp.ttrecord_sharded"
            " ORDER BY rowid"
        ))

    def add_buffers(self, rows: list[tuple[Any, ...]]) -> None:
        self.conn.executemany("INSERT INTO buffers VALUES (?,?,?,?,?,?)", rows)

    # -- the rest ----------------------------------------------------------------------------

    def add_device(self, row: list[Any]) -> None:
        self.conn.execute(f"INSERT INTO devices VALUES ({','.join('?' * len(row))})", row)

    def add_metadata(self, items: Iterable[tuple[str, str | None]]) -> None:
        self.conn.executemany("INSERT INTO report_metadata VALUES (?,?)", list(items))


def _rows(cursor: sqlite3.Cursor) -> Iterator[tuple[Any, ...]]:
    while batch := cursor.fetchmany(_BATCH):
        yield from batch


def tensor_items(text: str) -> list[dict[str, Any]]:
    """The items of a `CallRow.tensors` text as dicts of `TENSOR_FIELDS`, inputs then outputs,
    each in position order."""
    items = [dict(zip(TENSOR_FIELDS, r, strict=True)) for r in json.loads(text)]
    items.sort(key=lambda t: (t["role"], t["pos"]))
    return items
