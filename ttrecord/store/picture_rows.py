"""Rows the HTML report draws with, beyond the memory map's buffer rows (`buffer_rows`).

Each is one query for the whole session, so a million-event run costs a few table passes
rather than a query per buffer or per event.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from ttrecord.store.reader import Session


class OriginRow(NamedTuple):
    """The user's calls behind one buffer."""

    id: int
    alloc_call: int | None  # seq of the call that allocated it
    name: str | None  # that call's name
    callsite: int | None  # and its callsite id
    free_call: int | None  # seq of the call that freed it
    tensor: str | None  # "shape dtype" of the tensor it was made for


def buffer_origins(session: Session) -> dict[int, OriginRow]:
    """buffer id -> `OriginRow`: the user's call behind each allocation and free (an alloc or
    free event nested in a call is attributed to that call), for hover text and for tying a
    finding's culprit call to the buffer it made."""
    rows = session.query(
        "SELECT b.id, coalesce(a.parent, a.seq), p.name, p.callsite, coalesce(f.parent, f.seq),"
        " (SELECT t.shape || ' ' || t.dtype FROM tensors t"
        "  WHERE t.seq = p.seq AND t.buffer = b.id LIMIT 1)"
        " FROM buffers b LEFT JOIN events a ON a.seq = b.alloc_seq"
        " LEFT JOIN events p ON p.seq = coalesce(a.parent, a.seq)"
        " LEFT JOIN events f ON f.seq = b.free_seq"
    )
    return {r[0]: OriginRow._make(r) for r in rows}


def phase_changes(session: Session) -> list[tuple[int, str]]:
    """(seq, phase) at the first event and wherever the phase changes: the run's phase band
    in a few thousand rows instead of one per event."""
    return session.query(
        "SELECT seq, phase FROM (SELECT seq, phase, lag(phase) OVER (ORDER BY seq) AS prev"
        " FROM events) WHERE prev IS NULL OR prev != phase ORDER BY seq"
    )
