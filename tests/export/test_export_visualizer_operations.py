"""Rule: each top-level call is one operation, in call order, with its arguments and duration."""

import sqlite3

from ttrecord.export import visualizer
from ttrecord.store.reader import Session
from ttrecord.testing import SessionBuilder


def _export(session, tmp_path):
    with Session.open(session) as s:
        visualizer.export(s, tmp_path / "report")
    return sqlite3.connect(tmp_path / "report" / "db.sqlite")


def test_operations_follow_the_programs_calls(sample_session, tmp_path):
    # GIVEN the sample decode loop WHEN exported
    conn = _export(sample_session, tmp_path)
    ops = conn.execute("SELECT operation_id, name, duration FROM operations ORDER BY 1").fetchall()
    # THEN every call but opening the device is an operation, numbered from 1 in call order
    assert [name for _, name, _ in ops] == [
        "ttnn.copy_host_to_device_tensor", "ttnn.matmul",
        "ttnn.copy_host_to_device_tensor", "ttnn.matmul",
        "ttnn.begin_trace_capture", "ttnn.matmul", "ttnn.to_torch", "ttnn.end_trace_capture",
        "ttnn.execute_trace", "ttnn.release_trace",
    ]  # fmt: skip
    assert [op_id for op_id, _, _ in ops] == list(range(1, 11))
    assert {duration for _, _, duration in ops} == {500e-9}
    # AND an op's scalar arguments, phase and trace are its operation_arguments
    args = dict(conn.execute("SELECT name, value FROM operation_arguments WHERE operation_id = 6"))
    assert args["transpose_a"] == "false"
    assert args["ttrecord_phase"] == "capture" and args["ttrecord_trace_id"] == "0"


def test_nested_calls_are_not_operations(tmp_path):
    # GIVEN ttnn.linear calling ttnn.matmul inside it
    b = SessionBuilder()
    b.open_device()
    x = b.alloc(1048704)
    linear = b.op("ttnn.linear", [x], [x], line=3)
    b.op("ttnn.matmul", [x], [x], line=3, parent=linear.seq)
    b.op("add", [x], [x], line=4)
    conn = _export(b.write(tmp_path / "s.db"), tmp_path)
    # THEN only the user's own calls are operations, named by their Python path
    names = [n for (n,) in conn.execute("SELECT name FROM operations ORDER BY operation_id")]
    assert names == ["ttnn.linear", "ttnn.add"]
