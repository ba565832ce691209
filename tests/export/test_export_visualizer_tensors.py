"""Rule: the tensors a call read and wrote are report tensors, linked as inputs and outputs."""

import sqlite3

from ttrecord.export import visualizer
from ttrecord.store.reader import Session


def test_tensors_link_operations_and_resolve_their_size(sample_session, tmp_path):
    # GIVEN the sample session WHEN exported
    with Session.open(sample_session) as s:
        visualizer.export(s, tmp_path / "report")
    conn = sqlite3.connect(tmp_path / "report" / "db.sqlite")
    # THEN the captured matmul (operation 6) reads x and w and writes the new output
    inputs = conn.execute(
        "SELECT t.address, t.buffer_type, t.dtype, t.layout, t.shape, t.memory_config"
        " FROM input_tensors i JOIN tensors t USING (tensor_id)"
        " WHERE operation_id = 6 ORDER BY input_index").fetchall()  # fmt: skip
    assert [row[0] for row in inputs] == [1048704, 1050752]
    assert inputs[0][1:5] == (0, "DataType.BFLOAT16", "Layout.TILE", "Shape([32, 32])")
    assert inputs[0][5].startswith("MemoryConfig(memory_layout=TensorMemoryLayout::INTERLEAVED")
    (out_address,) = conn.execute(
        "SELECT t.address FROM output_tensors o JOIN tensors t USING (tensor_id)"
        " WHERE operation_id = 6").fetchone()  # fmt: skip
    assert out_address == 1054848
    # AND a host tensor (the data copied in) has no device placement
    host = conn.execute(
        "SELECT t.device_id, t.address, t.buffer_type FROM input_tensors i"
        " JOIN tensors t USING (tensor_id) WHERE operation_id = 1").fetchone()  # fmt: skip
    assert host == (None, None, None)
    # AND the visualizer's size lookup (the tensor's buffer in the snapshot of the operation
    # that used it) finds the bank-local size of every device tensor
    sizes = conn.execute(
        "SELECT t.tensor_id, max(b.max_size_per_bank) FROM tensors t"
        " LEFT JOIN input_tensors it ON it.tensor_id = t.tensor_id"
        " LEFT JOIN output_tensors ot ON ot.tensor_id = t.tensor_id"
        " LEFT JOIN buffers b ON b.operation_id = COALESCE(it.operation_id, ot.operation_id)"
        "  AND t.address = b.address AND t.device_id = b.device_id"
        " WHERE t.device_id IS NOT NULL GROUP BY t.tensor_id").fetchall()  # fmt: skip
    assert sizes and {size for _, size in sizes} == {2048}
