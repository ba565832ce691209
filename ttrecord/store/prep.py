"""Tags the prep run before each capture.

The prep run is the eager pass that compiles kernels and sets up buffers right before
`begin_trace_capture`. Only the capture says which calls belong to it, so it is derived when
the session closes: walking back from each capture, the eager calls whose call sites the
capture repeats (each no more often than the capture does) form its prep run. Transfers and
syncs in between belong to it too; the walk stops at the first op the capture does not repeat.
"""

from __future__ import annotations

import sqlite3
from collections import Counter


def tag_prep_runs(conn: sqlite3.Connection) -> int:
    """Set phase = 'prep' on every prep-run event (and its children); returns how many."""
    tagged = 0
    captures = conn.execute(
        "SELECT device, begin_seq, end_seq FROM traces WHERE end_seq IS NOT NULL"
    ).fetchall()
    for device, begin_seq, end_seq in captures:
        captured = Counter(
            site
            for (site,) in conn.execute(
                "SELECT callsite FROM events WHERE kind = 'op' AND parent IS NULL"
                " AND seq > ? AND seq < ? AND device IS ? AND callsite IS NOT NULL",
                (begin_seq, end_seq, device),
            )
        )
        if not captured:
            continue
        seen: Counter = Counter()
        window: list[int] = []
        rows = conn.execute(
            "SELECT seq, kind, callsite, phase FROM events WHERE parent IS NULL AND seq < ?"
            " AND kind IN ('op', 'h2d', 'd2h', 'sync') ORDER BY seq DESC",
            (begin_seq,),
        )
        for seq, kind, site, phase in rows:
            if phase != "eager":
                break
            if kind == "op":
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
    return tagged
