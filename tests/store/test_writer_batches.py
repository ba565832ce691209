"""What the writer stores does not depend on how the supervisor batches events.

The writer folds a free into the pending INSERT of a buffer allocated in the same batch and
updates older buffers afterwards, and it numbers call sites by object identity first; all of
that must give the same file as writing every event on its own.
"""

import sqlite3

from ttrecord.events import SessionStatus
from ttrecord.store.writer import SessionWriter
from ttrecord.testing import SessionBuilder


def _program() -> SessionBuilder:
    b = SessionBuilder()
    b.open_device()
    x = b.alloc(1048704)
    for step in range(3):
        y = b.alloc(1052800)
        b.op("ttnn.add", [x], [y], line=10)
        b.op("ttnn.relu", [y], [y], line=11)
        if step < 2:
            b.free(y)
    b.alloc(1052800, size=4096)  # the last y's free was never seen: its address is reused
    tid = b.begin_trace(line=20)
    b.op("ttnn.relu", [x], [x], line=11)
    b.end_trace(tid, line=21)
    for _ in range(3):
        b.execute(tid, line=22)
    b.release(tid, line=23)
    b.free(x)
    return b


def _write(b: SessionBuilder, path, batch: int) -> dict[str, list]:
    writer = SessionWriter(path)
    writer.start(script="model.py", argv=["model.py"], backend="emulator")
    for i in range(0, len(b.events), batch):
        writer.add(b.events[i : i + batch])
    writer.finish(SessionStatus.OK, exit_code=0)
    writer.close()
    conn = sqlite3.connect(path)
    try:
        return {
            table: conn.execute(f"SELECT * FROM {table} ORDER BY 1, 2").fetchall()
            for table in ("events", "buffers", "callsites", "tensors", "traces")
        }
    finally:
        conn.close()


def test_one_batch_and_single_event_batches_store_the_same_rows(tmp_path):
    """GIVEN a loop whose temporaries are allocated and freed, a free the log never shows and a
    trace replayed three times
    WHEN it is written in one batch, in batches of one event, and in batches of three
    THEN every table holds the same rows, with each buffer's free_seq and the trace's counts"""
    b = _program()
    whole = _write(b, tmp_path / "whole.db", batch=len(b.events))
    single = _write(b, tmp_path / "single.db", batch=1)
    threes = _write(b, tmp_path / "threes.db", batch=3)
    assert single == whole
    assert threes == whole
    # buffers: x, the three ys (two freed, one overwritten), the last allocation (live)
    assert [row[9] is None for row in whole["buffers"]] == [False, False, False, False, True]
    assert [row[0] for row in whole["callsites"]] == [1, 2, 3, 4, 5, 6, 7]
    (trace,) = whole["traces"]  # (id, device, trace_id, cq, begin, end, release, ops, executions)
    assert (trace[7], trace[8]) == (1, 3)


def test_equal_call_sites_from_new_objects_share_one_row(tmp_path):
    """GIVEN events whose call sites are equal but distinct objects (the builder makes a new
    CallSite per event) WHEN written THEN each site is stored once and events point to it"""
    b = _program()
    adds = [e for e in b.events if e.name == "ttnn.add"]
    assert adds[0].callsite is not adds[1].callsite
    rows = _write(b, tmp_path / "s.db", batch=2)
    ids = {row[11] for row in rows["events"] if row[6] == "ttnn.add"}
    assert len(ids) == 1
    assert [row[2] for row in rows["callsites"]].count(10) == 1
