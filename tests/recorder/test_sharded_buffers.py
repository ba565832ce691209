"""A sharded tensor's recorded buffer reserves one shard per bank (what the allocator reports as
max_size_per_bank), not its pages spread over every bank, so trace-memory overlaps involving
sharded buffers are decided on their real footprint."""

from __future__ import annotations

from tests.recorder.inprocess import record_inprocess

from ttrecord import emulator
import pytest

pytestmark = pytest.mark.slow


def test_sharded_op_output_footprint_is_one_shard_per_bank(tmp_path):
    """GIVEN a [128, 64] tensor height-sharded on 4 cores as [32, 64] shards (2 tiles each)
    WHEN recorded THEN the op's output buffer is 2 x 2048 bytes per bank at the sharded
    address (spread over 130 L1 banks its 8 pages would wrongly count as 2048)."""
    facts = {}

    def body(ttnn):
        import torch

        dev = ttnn.open_device(device_id=0)
        x = ttnn.from_torch(torch.ones(128, 64), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=dev)
        grid = ttnn.CoreRangeSet({ttnn.CoreRange(ttnn.CoreCoord(0, 0), ttnn.CoreCoord(3, 0))})
        cfg = ttnn.MemoryConfig(ttnn.TensorMemoryLayout.HEIGHT_SHARDED, ttnn.BufferType.L1,
                                ttnn.ShardSpec(grid, [32, 64], ttnn.ShardOrientation.ROW_MAJOR))
        s = ttnn.to_memory_config(x, cfg)
        facts["address"] = s.buffer_address()
        ttnn.close_device(dev)

    events = record_inprocess(emulator, body, tmp_path)
    op = next(e for e in events if e.name == "to_memory_config")
    out = op.outputs[0]
    assert out.buffer.address == facts["address"] == 1568768
    assert out.buffer.size == 4096
    assert "height_sharded" in out.memory_config


def test_footprint_without_an_allocator_snapshot_counts_one_shard_per_bank():
    """GIVEN no allocator snapshot knows the buffer yet WHEN a sharded tensor is described
    THEN its footprint is pages per shard x page (TILE: tiles of the shard; ROW_MAJOR: its
    rows), and an interleaved one still spreads its pages over the banks."""
    import torch

    from ttrecord.recorder.tensors import TensorDescriber

    dev = emulator.open_device(device_id=0)
    try:
        describer = TensorDescriber(lambda d: 0, lambda d, b, a: None, lambda d, b: 130)
        x = emulator.from_torch(torch.ones(64, 64), dtype=emulator.bfloat16, layout=emulator.ROW_MAJOR_LAYOUT, device=dev)
        grid = emulator.CoreRangeSet({emulator.CoreRange(emulator.CoreCoord(0, 0), emulator.CoreCoord(1, 0))})
        rm = emulator.to_memory_config(x, emulator.MemoryConfig(
            emulator.TensorMemoryLayout.HEIGHT_SHARDED, emulator.BufferType.L1,
            emulator.ShardSpec(grid, [32, 64], emulator.ShardOrientation.ROW_MAJOR)))
        tiled = emulator.to_memory_config(emulator.to_layout(x, emulator.TILE_LAYOUT), emulator.MemoryConfig(
            emulator.TensorMemoryLayout.HEIGHT_SHARDED, emulator.BufferType.L1,
            emulator.ShardSpec(grid, [32, 64], emulator.ShardOrientation.ROW_MAJOR)))
        interleaved = emulator.to_memory_config(x, emulator.L1_MEMORY_CONFIG)
        sizes = [describer.describe(t)[6][3] for t in (rm, tiled, interleaved)]
        assert sizes == [32 * 128, 2 * 2048, 128]
    finally:
        emulator.close_device(dev)
