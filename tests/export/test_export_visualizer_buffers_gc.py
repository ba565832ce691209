"""Rule: a buffer freed between two calls leaves the snapshot of the next operation, not this one."""

import sqlite3

from ttrecord.events import Kind
from ttrecord.export import visualizer
from ttrecord.store.reader import Session
from ttrecord.testing import SessionBuilder


def test_free_between_calls_and_free_inside_a_call(tmp_path):
    # GIVEN a buffer garbage-collected between two ops, and one freed inside an op's own call
    b = SessionBuilder()
    b.open_device()
    x, t, u = b.alloc(1048704), b.alloc(1050752), b.alloc(1052800)
    b.op("ttnn.add", [x], [x], line=3)
    b.free(t)  # Python dropped the last reference after add returned
    mul = b.op("ttnn.mul", [x], [x], line=4)
    b._add(Kind.FREE, "free", None, buffer=u, parent=mul.seq)  # freed inside mul
    b.op("ttnn.exp", [x], [x], line=5)
    with Session.open(b.write(tmp_path / "s.db")) as s:
        visualizer.export(s, tmp_path / "report")
    conn = sqlite3.connect(tmp_path / "report" / "db.sqlite")
    snapshots = [sorted(a for (a,) in conn.execute(
        "SELECT address FROM buffers WHERE operation_id = ?", (op,))) for op in (1, 2, 3)]  # fmt: skip
    # THEN add still sees t, mul sees neither t nor (after its own free) u
    assert snapshots == [[x.address, t.address, u.address], [x.address], [x.address]]
