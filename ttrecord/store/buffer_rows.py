"""Plain buffer rows for the UI's memory map (re-exported by the reader).

The map lays out every buffer of a session: 278,000 in a million-event decode loop. Through
`Session.buffers` each one became a `BufferRow` holding a `BufferRef`, 1.5 s of object building
before any layout, and the execute_trace calls came through the timeline query with its joins
(0.5 s for 35,000 calls). Here a buffer is one tuple of stored values, grouped by device and
buffer type in SQL so the type is not repeated on every row, and an execute_trace call is
(seq, device, trace).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from ttrecord.store.reader import Session



class MapRow(NamedTuple):
    """One buffer as the memory map draws it; read by name (a tuple, for cheap sorting)."""

    id: int
    address: int
    size: int
    alloc_seq: int
    free_seq: int | None
    alloc_phase: str | None
    page_size: int | None
    num_pages: int | None
    tensor_id: int | None


MAP_ROW_COLUMNS = MapRow._fields  # the columns selected, in MapRow's order
_make = MapRow._make


def map_buffer_rows(session: Session) -> dict[tuple[int, str], list[MapRow]]:
    """(device, buffer type) -> its buffers as `MapRow`s, in allocation order
    (alloc_seq, then id)."""
    counts = session.query(
        "SELECT device, buffer_type, count(*) FROM buffers GROUP BY device, buffer_type"
        " ORDER BY device, buffer_type"
    )
    columns = ", ".join(MAP_ROW_COLUMNS)
    if len(counts) == 1:
        rows = session.query(f"SELECT {columns} FROM buffers ORDER BY alloc_seq, id")
        return {(counts[0][0], counts[0][1]): list(map(_make, rows))}
    total = sum(n for *_, n in counts)
    out = {}
    for device, buffer_type, n in counts:
        # A type holding most buffers reads best through the alloc_seq index (already in the
        # order wanted); a small one through the (device, buffer_type) index and a sort.
        plus = "+" if 2 * n > total else ""
        out[(device, buffer_type)] = list(map(_make, session.query(
            f"SELECT {columns} FROM buffers WHERE {plus}device = ? AND {plus}buffer_type = ?"
            " ORDER BY alloc_seq, id",
            (device, buffer_type),
        )))  # fmt: skip
    return out


def map_rows_by_id(session: Session, ids: Iterable[int]) -> dict[int, tuple[tuple[int, str], MapRow]]:
    """buffer id -> ((device, buffer type), `MapRow`) for those of `ids` that
    exist: the few buffers traces touched, without scanning all the rows for them."""
    rows = session.query(
        f"SELECT device, buffer_type, {', '.join(MAP_ROW_COLUMNS)} FROM buffers"
        " WHERE id IN (SELECT value FROM json_each(?))",
        (json.dumps(sorted(ids)),),
    )
    return {r[2]: ((r[0], r[1]), _make(r[2:])) for r in rows}


def trace_execute_rows(session: Session) -> list[tuple[int, int | None, int | None]]:
    """(seq, device, trace id) of every execute_trace call, in seq order."""
    return session.query(
        "SELECT seq, device, trace FROM events WHERE kind = 'trace_execute' ORDER BY seq"
    )
