"""The likely cause: the unpaired live buffer that took the tensor's place, else the nearest one
on the side the allocator fills from (below for DRAM, above for L1)."""

from ttrecord.analysis.drift.cause import likely_cause
from ttrecord.analysis.drift.compare import compare_ops
from ttrecord.analysis.drift.model import CapturedOp, LiveBuffer, LiveDifference, OpPair, Tensor
from ttrecord.events import BufferRef


def _tensor(btype: str, address: int, device: int = 0) -> Tensor:
    return Tensor("device", "[32,32]", "BFLOAT16", "TILE", f"{btype} interleaved", btype,
                  address, 2048, device)  # fmt: skip


def _pair(btype: str, a: int, b: int, device_b: int = 0) -> OpPair:
    op_a = CapturedOp(10, 0, "ttnn.matmul", "m.py", 5, "f", (), (_tensor(btype, a),))
    op_b = CapturedOp(20, 0, "ttnn.matmul", "m.py", 5, "f", (), (_tensor(btype, b, device_b),))
    return OpPair(op_a, op_b, compare_ops(op_a, op_b))


def _extra(run: str, btype: str, address: int, line: int, device: int = 0) -> LiveDifference:
    buf = BufferRef(device, btype, address, 2048)
    return LiveDifference(run, LiveBuffer(buf, 7, "ttnn.zeros", "m.py", line, "f"))


def test_the_buffer_at_the_other_runs_address_wins_even_across_device_numbering():
    """GIVEN B (recorded as device 1) moved a tensor from 0x1000 to 0x1800, and B keeps two
    extra buffers, one of them at 0x1000
    WHEN the cause is looked for THEN it is the one at 0x1000, displacing A's 0x1000."""
    pair = _pair("DRAM", 0x1000, 0x1800, device_b=1)
    cause = likely_cause(pair, [_extra("b", "DRAM", 0x0, 3, 1), _extra("b", "DRAM", 0x1000, 4, 1)])
    assert cause is not None and cause.difference.live.line == 4 and cause.displaced == 0x1000


def test_dram_without_a_covering_buffer_takes_the_nearest_below():
    """GIVEN a DRAM tensor moved up to 0x9000 and unpaired B buffers at 0x2000, 0x8000 and
    0xA000, none covering A's 0x5000 WHEN looked for THEN 0x8000 (nearest below), no displaced."""
    pair = _pair("DRAM", 0x5000, 0x9000)
    diffs = [_extra("b", "DRAM", a, n) for n, a in enumerate((0x2000, 0x8000, 0xA000))]
    cause = likely_cause(pair, diffs)
    assert cause is not None and cause.difference.live.buffer.address == 0x8000
    assert cause.displaced is None


def test_l1_fills_top_down_so_the_nearest_above_is_chosen():
    """GIVEN an L1 tensor moved down from 0x90000 to 0x80000 and unpaired B buffers at 0x70000
    and 0x88000 WHEN looked for THEN 0x88000: above the tensor, where top-down allocation
    put the extra buffer."""
    pair = _pair("L1", 0x90000, 0x80000)
    diffs = [_extra("b", "L1", 0x70000, 1), _extra("b", "L1", 0x88000, 2)]
    cause = likely_cause(pair, diffs)
    assert cause is not None and cause.difference.live.buffer.address == 0x88000


def test_no_cause_when_nothing_but_the_shape_changed():
    """GIVEN an aligned op whose output shape changed but not its address
    WHEN looked for THEN there is no allocation to blame."""
    op_a = CapturedOp(1, 0, "ttnn.add", "m.py", 5, "f", (), (_tensor("DRAM", 0x1000),))
    other = _tensor("DRAM", 0x1000)._replace(shape_json="[64,32]")
    op_b = CapturedOp(2, 0, "ttnn.add", "m.py", 5, "f", (), (other,))
    pair = OpPair(op_a, op_b, compare_ops(op_a, op_b))
    assert [(c.field, c.a, c.b) for c in pair.changes] == [("shape", (32, 32), (64, 32))]
    assert likely_cause(pair, [_extra("b", "DRAM", 0x0, 1)]) is None
