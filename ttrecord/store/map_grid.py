"""Aggregates of the buffers table for the UI's scaled memory map (re-exported by the reader).

A million-event decode loop holds 278,000 buffers; a terminal shows a few thousand cells. The
map is drawn from these grouped queries: SQLite buckets each buffer by the address rows and
seq columns it covers and counts the buffers per bucket, so what crosses into Python is at
most one row per distinct bucket span, not one per buffer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ttrecord.store.reader import Session

# (first row, last row, first column, last column, buffers, of them allocated in capture)
CellSpan = tuple[int, int, int, int, int, int]


def map_extents(session: Session) -> list[tuple[int, str, int, int, int]]:
    """(device, buffer type, buffers, lowest address, highest end) per map, in device then
    type order: one pass over the (device, buffer_type, address) index."""
    return session.query(
        "SELECT device, buffer_type, count(*), min(address), max(address + size) FROM buffers"
        " GROUP BY device, buffer_type ORDER BY device, buffer_type"
    )


def buffer_cells(session: Session, device: int, buffer_type: str, addr_lo: int, addr_step: int,
                 rows: int, seq_lo: int, seq_step: int, cols: int, last_seq: int) -> list[CellSpan]:  # fmt: skip
    """The buffers live in the window (`rows` address steps from `addr_lo`, `cols` seq steps
    from `seq_lo`) grouped by the rectangle of cells they cover, with their count. A buffer
    still live at the end counts until `last_seq`."""
    addr_hi = addr_lo + addr_step * rows
    seq_hi = seq_lo + seq_step * cols - 1
    return list(session.query_iter(
        "SELECT (max(address, :alo) - :alo) / :astep AS r0,"
        " (min(address + size, :ahi) - 1 - :alo) / :astep AS r1,"
        " (max(alloc_seq, :slo) - :slo) / :sstep AS c0,"
        " (min(coalesce(free_seq, :last), :shi) - :slo) / :sstep AS c1,"
        " count(*), total(alloc_phase = 'capture')"
        " FROM buffers WHERE device = :dev AND buffer_type = :bt AND address < :ahi"
        " AND address + size > :alo AND alloc_seq <= :shi AND coalesce(free_seq, :last) >= :slo"
        " GROUP BY r0, r1, c0, c1",
        {"alo": addr_lo, "ahi": addr_hi, "astep": addr_step, "slo": seq_lo, "shi": seq_hi,
         "sstep": seq_step, "last": last_seq, "dev": device, "bt": buffer_type},
    ))  # fmt: skip


def buffers_in_window(session: Session, device: int, buffer_type: str, addr_lo: int,
                      addr_hi: int, seq_lo: int, seq_hi: int, last_seq: int,
                      limit: int = 50) -> list[tuple[int, int, int, int, int | None, str | None]]:  # fmt: skip
    """(id, address, size, alloc_seq, free_seq, alloc_phase) of the first `limit` buffers in
    [addr_lo, addr_hi) that were live at some seq in [seq_lo, seq_hi], by address then time."""
    return list(session.query_iter(
        "SELECT id, address, size, alloc_seq, free_seq, alloc_phase FROM buffers"
        " WHERE device = :dev AND buffer_type = :bt AND address < :ahi AND address + size > :alo"
        " AND alloc_seq <= :shi AND coalesce(free_seq, :last) >= :slo"
        " ORDER BY address, alloc_seq, id LIMIT :limit",
        {"dev": device, "bt": buffer_type, "alo": addr_lo, "ahi": addr_hi, "slo": seq_lo,
         "shi": seq_hi, "last": last_seq, "limit": limit},
    ))  # fmt: skip
