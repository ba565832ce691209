"""Event throughput of the session writer, the SQLite floor under it, and bytes per event.

Events of a synthetic decode loop are generated first (not timed), then go through
`SessionWriter.add` in batches exactly as the recorder's supervisor sends them, including
`finish` (prep tagging, indexes, checkpoint). The floor is SQLite alone inserting the same rows
(read back from that file) into an empty session file in the same batches: no writer code at
all, so `writer_share` is the part of the time the writer's own Python adds. Times are CPU
time of this thread (SQLite runs in it), so other load on the machine does not inflate them;
wall-clock throughput is printed too.
Run: python -m benchmarks.store_throughput [N_EVENTS]
"""

from __future__ import annotations

import json
import os
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.synthetic import decode_events
from ttrecord.events import SessionStatus
from ttrecord.store.writer import SessionWriter

TARGET_EVENTS_PER_S = 200_000
BATCH = 5000
_TABLES = ("events", "tensors", "buffers")


def write(path: Path, events: list) -> tuple[float, float]:
    """Write the events as the supervisor does; (CPU seconds, wall seconds)."""
    c0, t0 = time.thread_time(), time.perf_counter()
    writer = SessionWriter(path)
    writer.start(script="/models/decoder.py", argv=["/models/decoder.py"], backend="emulator")
    for i in range(0, len(events), BATCH):
        writer.add(events[i : i + BATCH])
    writer.finish(SessionStatus.OK, exit_code=0)
    writer.close()
    return time.thread_time() - c0, time.perf_counter() - t0


def sqlite_floor(written: Path, scratch: Path, n_events: int) -> float:
    """CPU seconds for SQLite alone to insert the written rows, batch by batch, and build the
    same indexes: the least any writer using sqlite3 with this schema can spend."""
    src = sqlite3.connect(written)
    tables = {t: src.execute(f"SELECT * FROM {t} ORDER BY rowid").fetchall() for t in _TABLES}
    src.close()
    writer = SessionWriter(scratch)  # an empty session file with the same schema and pragmas
    conn = writer._conn
    sql = {t: f"INSERT INTO {t} VALUES ({', '.join('?' * len(rows[0]))})"
           for t, rows in tables.items()}  # fmt: skip
    # Each batch carries its share of every table, in the writer's order.
    shares = {t: len(rows) / n_events for t, rows in tables.items()}
    c0 = time.thread_time()
    for i in range(0, n_events, BATCH):
        conn.execute("BEGIN")
        for t, rows in tables.items():
            lo, hi = round(i * shares[t]), round(min(i + BATCH, n_events) * shares[t])
            conn.executemany(sql[t], rows[lo:hi])
        conn.execute("COMMIT")
    from ttrecord.store import schema

    schema.create_indexes(writer.db)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    cpu = time.thread_time() - c0
    writer.close()
    return cpu


def measure(n_events: int = 200_000) -> dict:
    events = list(decode_events(n_events))
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "s.db"
        cpu, wall = write(path, events)
        size = path.stat().st_size
        floor = sqlite_floor(path, Path(tmp) / "floor.db", len(events))
    n = len(events)
    return {
        "benchmark": "store_throughput",
        "events": n,
        "events_per_s": round(n / cpu),
        "events_per_s_wall": round(n / wall),
        "sqlite_floor_events_per_s": round(n / floor),
        "writer_share": round(1 - floor / cpu, 3),
        "us_per_event": round(cpu / n * 1e6, 2),
        "sqlite_us_per_event": round(floor / n * 1e6, 2),
        "bytes_per_event": round(size / n, 1),
        "target_events_per_s": TARGET_EVENTS_PER_S,
        "within_target": n / cpu >= TARGET_EVENTS_PER_S,
        "load_avg_1m": round(os.getloadavg()[0], 2),
    }


def main() -> list[dict]:
    result = measure(int(sys.argv[1]) if len(sys.argv) > 1 else 200_000)
    print(json.dumps(result), flush=True)
    return [result]


if __name__ == "__main__":
    main()
