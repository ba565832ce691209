"""Flat rows of a capture's ops, for `ttrecord diff` (re-exported by the reader).

A diff reads every top-level op of two captures, 100,000s each. Through `Session.events` every
op became a full `Event` (args, status, times) and its tensors came from a second query, one
Python tuple of 12 values per tensor row: 3.3 s for two 100,000-op captures, against a 3 s
budget for the whole diff. Here SQLite returns one row per op with only what the diff uses,
and folds the op's tensors into one JSON text; captures loop over the same buffers, so equal
texts repeat and the caller decodes each distinct one once (`op_tensors`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ttrecord.store.reader import Session

_OPS_SQL = (
    "SELECT e.seq, e.name, e.callsite, (SELECT json_group_array(json_array(t.role, t.pos,"
    " t.storage, t.shape, t.dtype, t.layout, t.memory_config, t.buffer_type, t.address,"
    " t.size, t.device)) FROM tensors t WHERE t.seq = e.seq)"
    " FROM events e WHERE e.phase = ? AND e.kind = 'op' AND e.device = ? AND e.parent IS NULL"
    " AND e.seq > ? AND e.seq < ? ORDER BY e.seq"
)


def capture_op_rows(
    session: Session, phase: str, device: int, after: int, before: int
) -> Iterator[tuple[int, str, int | None, str]]:
    """(seq, name, callsite id, tensors) of the user's own ops (`kind = 'op'`, no parent) of
    one phase on one device with `after < seq < before`, in seq order. `tensors` is JSON text:
    decode it with `op_tensors` (equal texts mean equal tensors). Streamed: all the rows of a
    300,000-op capture at once would hold 120 MB of texts the caller decodes once each."""
    return session.query_iter(_OPS_SQL, (phase, device, after, before))


def op_tensors(text: str) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    """The inputs and outputs in a `capture_op_rows` tensors text, each in position order:
    (storage, shape, dtype, layout, memory_config, buffer_type, address, size, device) tuples
    of the values as stored (the shape stays JSON text)."""
    rows = sorted(json.loads(text), key=lambda r: (r[0], r[1]))  # role, pos: as stored
    ins = [tuple(r[2:]) for r in rows if r[0] == "in"]
    outs = [tuple(r[2:]) for r in rows if r[0] != "in"]
    return ins, outs
