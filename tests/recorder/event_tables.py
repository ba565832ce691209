"""A session's recorded tables with what differs between two runs of the same program taken
out (times, thread ids, the process id, the session id), so two recordings of one program can
be compared row for row: `event_tables(path)`.

Run as `python -m tests.recorder.event_tables A.db B.db` to print the first difference.
"""

from __future__ import annotations

import json
import sqlite3
import sys
from collections import Counter
from pathlib import Path

# Tables and the columns that change from run to run.
VOLATILE = {
    "events": ("t_ns", "dur_ns"),
    "session": ("id", "pid", "started_at", "ended_at", "host", "options", "argv", "cwd"),
}
TABLES = ("session", "events", "tensors", "buffers", "traces", "callsites", "devices", "sources")


def event_tables(path: Path | str) -> dict[str, list[tuple]]:
    """{table: rows in key order}, volatile columns left out and thread ids numbered by first
    appearance."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        out: dict[str, list[tuple]] = {}
        names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        for table in TABLES:
            if table not in names:
                continue
            cols = [r[1] for r in conn.execute(f"PRAGMA table_info({table})")]
            keep = [c for c in cols if c not in VOLATILE.get(table, ())]
            rows = conn.execute(f"SELECT {', '.join(keep)} FROM {table} ORDER BY rowid").fetchall()
            if table == "events" and "thread" in keep:
                at = keep.index("thread")
                numbers: dict[object, int] = {}
                rows = [r[:at] + (numbers.setdefault(r[at], len(numbers)),) + r[at + 1 :]
                        for r in rows]  # fmt: skip
            out[table] = [tuple(keep)] + rows
        return out
    finally:
        conn.close()


def calls_made(path: Path | str) -> Counter:
    """How often each call (kind, name, phase, device, status) occurs: what two recordings of
    a program whose threads interleave as the OS schedules them have in common (not their
    buffer events: how often one thread's freed address is reused by the other before a call
    sees the free depends on that order too)."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return Counter(conn.execute("SELECT kind, name, phase, device, status FROM events"
                                    " WHERE kind NOT IN ('alloc', 'free')"))  # fmt: skip
    finally:
        conn.close()


def session_options(path: Path | str) -> dict:
    """The session's recorder options (the hot path and pipeline it names, among them)."""
    conn = sqlite3.connect(path)
    try:
        return json.loads(conn.execute("SELECT options FROM session").fetchone()[0])
    finally:
        conn.close()


def first_difference(a: Path | str, b: Path | str) -> str | None:
    """A one-line description of where two sessions' tables first differ, else None."""
    ta, tb = event_tables(a), event_tables(b)
    for table in TABLES:
        ra, rb = ta.get(table, []), tb.get(table, [])
        for i, (x, y) in enumerate(zip(ra, rb)):
            if x != y:
                return f"{table} row {i}: {x!r} != {y!r}"
        if len(ra) != len(rb):
            return f"{table}: {len(ra)} rows != {len(rb)} rows"
    return None


if __name__ == "__main__":
    diff = first_difference(sys.argv[1], sys.argv[2])
    print(diff or "identical")
    sys.exit(1 if diff else 0)
