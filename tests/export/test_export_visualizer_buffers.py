"""Rule: after each operation, `buffers` lists every buffer live then (ttnn's get_buffers())."""

import sqlite3

from ttrecord.export import visualizer
from ttrecord.store.reader import Session


def test_buffer_snapshots_follow_allocations_and_frees(sample_session, tmp_path):
    # GIVEN the sample session: x, w live throughout, y freed and allocated again at the same
    # address in the second iteration, y2 allocated inside the capture
    with Session.open(sample_session) as s:
        visualizer.export(s, tmp_path / "report")
    conn = sqlite3.connect(tmp_path / "report" / "db.sqlite")

    def live(op_id: int) -> list[int]:
        return [a for (a,) in conn.execute(
            "SELECT address FROM buffers WHERE operation_id = ? ORDER BY address", (op_id,))]

    x, w, y, y2 = 1048704, 1050752, 1052800, 1054848
    # THEN each snapshot holds what was live when the operation finished; a free or an
    # allocation recorded between two calls shows in the next operation's snapshot
    assert live(1) == [x, w]  # first copy_host_to_device_tensor
    assert live(2) == [x, w, y]  # first matmul: y was allocated for it
    assert live(5) == [x, w, y]  # begin_trace_capture
    assert live(6) == [x, w, y, y2]  # the captured matmul's output joins them
    assert live(10) == [x, w, y, y2]  # nothing freed before release
    # AND sizes are bank-local, types and layouts are ttnn's enum values
    rows = set(conn.execute("SELECT max_size_per_bank, buffer_type, buffer_layout FROM buffers"))
    assert rows == {(2048, 0, 0)}
