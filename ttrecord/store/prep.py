"""Tags the prep run before each capture.

The prep run is the eager pass that compiles kernels and sets up buffers right before
`begin_trace_capture`. Only the capture says which calls belong to it, so it is derived when
the session closes: walking back from each capture, the eager calls whose call sites the
capture repeats (each no more often than the capture does) form its prep run. Transfers, syncs
and `ttnn.deallocate` calls in between belong to it too (freeing the warm-up's outputs before the
capture is the common shape); the walk stops at the first op the capture does not repeat.
"""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from collections.abc import Iterable
from typing import Any


# Calls that only free memory: one between the warm-up and the capture does not end the walk.
FREES_ONLY = frozenset(("deallocate",))


def tag_prep_runs(conn: sqlite3.Connection) -> int:
    """Set phase = 'prep' on every prep-run event (and its children); returns how many."""
    tagged = 0
    captures = conn.execute(
        "SELECT device, begin_seq, end_seq FROM traces WHERE end_seq IS NOT NULL"
    ).fetchall()
    for device, begin_seq, end_seq in captures:
        # Sites compare by file and line: the stack above them differs between the prep call
        # and the capture call of the same step function.
        captured: Counter[tuple[Any, ...] | None] = Counter(
            (file, line)
            for (file, line) in conn.execute(
                "SELECT c.file, c.line FROM events e JOIN callsites c ON c.id = e.callsite"
                " WHERE e.kind = 'op' AND e.parent IS NULL"
                " AND e.seq > ? AND e.seq < ? AND e.device IS ?",
                (begin_seq, end_seq, device),
            )
        )
        if not captured:
            continue
        seen: Counter = Counter()
        window: list[int] = []
        rows: Iterable[Any] = conn.execute(
            "SELECT e.seq, e.kind, (SELECT json_array(c.file, c.line) FROM callsites c"
            " WHERE c.id = e.callsite), e.phase, e.name FROM events e WHERE e.parent IS NULL"
            " AND e.seq < ? AND e.kind IN ('op', 'h2d', 'd2h', 'sync') ORDER BY e.seq DESC",
            (begin_seq,),
        )
        for seq, kind, site_json, phase, name in rows:
            site = tuple(json.loads(site_json)) if site_json else None
            if phase != "eager":
                break
            if kind == "op" and name.rsplit(".", 1)[-1] in FREES_ONLY:
                pass  # freeing a warm-up output between warm-up and capture computes nothing
            elif kind == "op":
                if site not in captured or seen[site] >= captured[site]:
                    break
                seen[site] += 1
            window.append(seq)
        if not seen:  # a window that repeats none of the captured ops is not a prep run
            continue
        rows = [(seq,) for seq in window]
        before = conn.total_changes
        conn.executemany("UPDATE events SET phase = 'prep' WHERE seq = ? AND phase = 'eager'", rows)
        conn.executemany(
            "UPDATE events SET phase = 'prep' WHERE parent = ? AND phase = 'eager'", rows
        )
        tagged += conn.total_changes - before
        conn.execute(
            "UPDATE events SET phase = 'prep' WHERE phase = 'eager' AND kind IN ('alloc', 'free')"
            " AND seq BETWEEN ? AND ?",
            (min(window), begin_seq),
        )
    if tagged:  # the buffers a prep run allocated are drawn as such (HTML map, TUI)
        conn.execute("UPDATE buffers SET alloc_phase = 'prep' WHERE alloc_phase = 'eager' AND"
                     " alloc_seq IN (SELECT seq FROM events WHERE phase = 'prep')")  # fmt: skip
    return tagged
