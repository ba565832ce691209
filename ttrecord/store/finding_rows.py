"""Questions the readers ask about a finding's surroundings, answered in SQL on a session:
whether the run recorded anything to judge, the TT_FATALs a keep-going run went past, and
where the lines a suggested patch rewrites came from. Each is a few indexed look-ups."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ttrecord.store.reader import Session


def has_kind(session: Session, kinds: tuple[str, ...]) -> bool:
    """Whether any event of these kinds was recorded."""
    marks = ",".join("?" * len(kinds))
    return bool(session.query(f"SELECT 1 FROM events WHERE kind IN ({marks}) LIMIT 1", kinds))


def warnings_by_call(session: Session, name: str) -> dict[int, str]:
    """The message of each warning event named `name`, by the seq of the call it came from."""
    out: dict[int, str] = {}
    rows = session.query("SELECT parent, args FROM events WHERE kind = 'warning' AND name = ?"
                         " AND parent IS NOT NULL ORDER BY seq", (name,))  # fmt: skip
    for parent, args in rows:
        try:
            out.setdefault(int(parent), str(json.loads(args or "{}").get("message", "")))
        except ValueError:
            continue
    return out


def first_maker(session: Session, address: int, buffer_type: str | None,
                before: int) -> tuple[str, int] | None:  # fmt: skip
    """(file, line) of the first call before `before` whose output was the buffer at
    `address`: the line that made a tensor."""
    rows = session.query(
        "SELECT c.file, c.line FROM tensors t JOIN events e ON e.seq = t.seq"
        " JOIN callsites c ON c.id = e.callsite WHERE t.role = 'out' AND t.address = ?"
        " AND t.buffer_type IS ? AND e.seq < ? ORDER BY e.seq LIMIT 1",
        (address, buffer_type, before))  # fmt: skip
    return (str(rows[0][0]), int(rows[0][1])) if rows else None


def next_execute_line(session: Session, after: int, device: int | None, trace: int,
                      file: str, function: str) -> int | None:  # fmt: skip
    """The line of the first `execute_trace` of that trace after seq `after`, made from
    `function` in `file`."""
    rows = session.query(
        "SELECT c.line FROM events e JOIN callsites c ON c.id = e.callsite WHERE e.kind ="
        " 'trace_execute' AND e.seq > ? AND e.device IS ? AND e.trace = ? AND c.file = ?"
        " AND c.function = ? ORDER BY e.seq LIMIT 1", (after, device, trace, file, function))  # fmt: skip
    return int(rows[0][0]) if rows else None


# (buffer id, address, buffer type, shape JSON, dtype, seq of the call that used it)
TraceBuffer = tuple[int, int, str, str, str, int]


def trace_buffers(session: Session, device: int | None, begin: int,
                  end: int) -> tuple[list[TraceBuffer], list[TraceBuffer]]:  # fmt: skip
    """(inputs, outputs) of the capture between seqs `begin` and `end`: the device buffers its
    calls read that none of them made (first use first), and those they made that were still
    allocated when it ended (last write first)."""
    made = ("SELECT t2.buffer FROM tensors t2 JOIN events e2 ON e2.seq = t2.seq WHERE t2.seq > ?"
            " AND t2.seq < ? AND t2.role = 'out' AND t2.buffer IS NOT NULL AND e2.device IS ?")
    inputs = session.query(
        "SELECT t.buffer, t.address, t.buffer_type, t.shape, t.dtype, MIN(e.seq) FROM tensors t"
        " JOIN events e ON e.seq = t.seq WHERE e.seq > ? AND e.seq < ? AND e.device IS ?"
        " AND t.role = 'in' AND t.storage = 'device' AND t.buffer IS NOT NULL"
        f" AND t.buffer NOT IN ({made}) GROUP BY t.buffer ORDER BY MIN(e.seq), MIN(t.pos)",
        (begin, end, device, begin, end, device))  # fmt: skip
    outputs = session.query(
        "SELECT t.buffer, t.address, t.buffer_type, t.shape, t.dtype, MAX(e.seq) FROM tensors t"
        " JOIN events e ON e.seq = t.seq WHERE e.seq > ? AND e.seq < ? AND e.device IS ?"
        " AND t.role = 'out' AND t.buffer IS NOT NULL AND t.buffer NOT IN (SELECT buffer FROM"
        " events WHERE kind = 'free' AND seq > ? AND seq <= ? AND buffer IS NOT NULL)"
        " GROUP BY t.buffer ORDER BY MAX(e.seq) DESC",
        (begin, end, device, begin, end))  # fmt: skip
    return [tuple(r) for r in inputs], [tuple(r) for r in outputs]
