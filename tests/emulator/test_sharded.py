"""Sharded tensors hold their values shard by shard on the cores their spec names, and a
trace replay writing a sharded buffer overwrites exactly those cores' bytes."""

from __future__ import annotations

import pytest
import torch

from ttrecord import emulator as ttnn

TML = ttnn.TensorMemoryLayout


def sharded(layout, start, end, shard, btype=ttnn.BufferType.L1, orientation=ttnn.ShardOrientation.ROW_MAJOR):
    grid = ttnn.CoreRangeSet({ttnn.CoreRange(ttnn.CoreCoord(*start), ttnn.CoreCoord(*end))})
    return ttnn.MemoryConfig(layout, btype, ttnn.ShardSpec(grid, shard, orientation))


CASES = [
    ("height tile", (128, 64), ttnn.TILE_LAYOUT, sharded(TML.HEIGHT_SHARDED, (0, 0), (3, 0), [32, 64])),
    ("width tile", (64, 256), ttnn.TILE_LAYOUT, sharded(TML.WIDTH_SHARDED, (0, 0), (3, 0), [64, 64])),
    ("block tile", (128, 128), ttnn.TILE_LAYOUT, sharded(TML.BLOCK_SHARDED, (0, 0), (1, 1), [64, 64])),
    ("block col-major", (128, 128), ttnn.TILE_LAYOUT,
     sharded(TML.BLOCK_SHARDED, (0, 0), (1, 1), [64, 64], orientation=ttnn.ShardOrientation.COL_MAJOR)),
    ("height row-major", (64, 64), ttnn.ROW_MAJOR_LAYOUT, sharded(TML.HEIGHT_SHARDED, (0, 0), (1, 0), [32, 64])),
    ("width row-major", (64, 128), ttnn.ROW_MAJOR_LAYOUT, sharded(TML.WIDTH_SHARDED, (0, 0), (1, 0), [64, 64])),
    ("width DRAM", (32, 512), ttnn.TILE_LAYOUT,
     sharded(TML.WIDTH_SHARDED, (0, 0), (7, 0), [32, 64], btype=ttnn.BufferType.DRAM)),
    ("uneven height", (1, 96, 64), ttnn.TILE_LAYOUT, sharded(TML.HEIGHT_SHARDED, (0, 0), (3, 0), [64, 64])),
]


@pytest.mark.parametrize("name,shape,layout,memcfg", CASES, ids=[c[0] for c in CASES])
def test_values_survive_interleaved_to_sharded_and_back(device, name, shape, layout, memcfg):
    data = torch.randn(shape).to(torch.bfloat16)
    x = ttnn.from_torch(data, layout=layout, device=device)
    s = ttnn.to_memory_config(x, memcfg)
    assert s.is_sharded() and s.memory_config() == memcfg
    assert torch.equal(ttnn.to_torch(s), data)
    back = ttnn.sharded_to_interleaved(s, ttnn.DRAM_MEMORY_CONFIG)
    assert not back.is_sharded() and torch.equal(ttnn.to_torch(back), data)


def test_each_height_shard_lives_on_its_own_core(device):
    data = torch.arange(128).repeat_interleave(64).reshape(128, 64).to(torch.bfloat16)
    s = ttnn.to_memory_config(ttnn.from_torch(data, layout=ttnn.TILE_LAYOUT, device=device),
                              sharded(TML.HEIGHT_SHARDED, (0, 0), (3, 0), [32, 64]))
    l1 = device.memories[ttnn.BufferType.L1]
    for core_x in range(4):  # shard i = rows 32i..32i+31 -> core (i, 0); first element of its first tile
        bank = device.config.l1_bank_of_core((core_x, 0))
        first = l1.bank_bytes(bank, s.buffer_address(), 2).view("<u2")[0]
        assert torch.tensor([first], dtype=torch.int16).view(torch.bfloat16).item() == 32 * core_x


def test_replay_overwrites_a_later_buffer_only_on_the_cores_of_the_sharded_intermediate(device):
    """A trace's sharded L1 intermediate is freed at the end of capture; an interleaved L1 buffer
    allocated over that address afterwards is corrupted by the replay on those 4 cores only."""
    memcfg = sharded(TML.HEIGHT_SHARDED, (0, 0), (3, 0), [32, 64])
    x = ttnn.from_torch(torch.ones(128, 64), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    ttnn.sharded_to_interleaved(ttnn.to_memory_config(x, memcfg), ttnn.DRAM_MEMORY_CONFIG)  # compile run
    tid = ttnn.begin_trace_capture(device, cq_id=0)
    inner = ttnn.to_memory_config(x, memcfg)
    out = ttnn.sharded_to_interleaved(inner, ttnn.DRAM_MEMORY_CONFIG)
    address = inner.buffer_address()
    del inner
    ttnn.end_trace_capture(device, tid, cq_id=0)
    victim_value = torch.full((32 * 260, 32), 5.0)  # 2 tiles per bank, like the intermediate
    with pytest.warns(ttnn.TraceAllocationWarning):
        victim = ttnn.from_torch(victim_value, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device,
                                 memory_config=ttnn.L1_MEMORY_CONFIG)
    assert victim.buffer_address() == address
    ttnn.execute_trace(device, tid, cq_id=0)
    got = ttnn.to_torch(victim).reshape(260, 32, 32)[:130, 0, 0]  # first element of page k, in bank k
    hit = {device.config.l1_bank_of_core((cx, 0)) for cx in range(4)}
    assert [k for k in range(130) if got[k].item() != 5.0] == sorted(hit)
    assert torch.equal(ttnn.to_torch(out), torch.ones(128, 64, dtype=torch.bfloat16))
    ttnn.release_trace(device, tid)


def test_reshard_into_the_captured_input_keeps_its_address(device):
    memcfg = sharded(TML.HEIGHT_SHARDED, (0, 0), (1, 0), [64, 64])
    captured = ttnn.to_memory_config(ttnn.from_torch(torch.zeros(128, 64), layout=ttnn.TILE_LAYOUT, device=device), memcfg)
    new = ttnn.to_memory_config(ttnn.from_torch(torch.full((128, 64), 3.0), layout=ttnn.TILE_LAYOUT, device=device),
                                sharded(TML.HEIGHT_SHARDED, (0, 0), (3, 0), [32, 64]))
    before = captured.buffer_address()
    ttnn.reshard(new, memcfg, captured)
    assert captured.buffer_address() == before
    assert torch.equal(ttnn.to_torch(captured), torch.full((128, 64), 3.0, dtype=torch.bfloat16))


def test_sharded_memory_config_without_a_spec_gets_one_that_fits(device):
    x = ttnn.from_torch(torch.randn(1, 1, 256, 64), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    y = ttnn.to_memory_config(x, ttnn.MemoryConfig(TML.HEIGHT_SHARDED, ttnn.BufferType.L1))
    spec = y.memory_config().shard_spec
    assert spec.shape == [32, 64] and spec.num_cores() == 8
    assert torch.equal(ttnn.to_torch(y), ttnn.to_torch(x))


def test_create_sharded_memory_config_follows_ttnn_rules():
    cfg = ttnn.create_sharded_memory_config((1, 1, 256, 64), ttnn.CoreGrid(y=2, x=4), ttnn.ShardStrategy.HEIGHT)
    assert cfg.memory_layout == TML.HEIGHT_SHARDED and cfg.buffer_type == ttnn.BufferType.L1
    assert cfg.shard_spec.shape == [32, 64] and cfg.shard_spec.grid.num_cores() == 8
    block = ttnn.create_sharded_memory_config((128, 256), ttnn.CoreGrid(y=2, x=4), ttnn.ShardStrategy.BLOCK)
    assert block.shard_spec.shape == [64, 64]
    with pytest.raises(RuntimeError, match="Invalid sharding core_grid"):
        ttnn.create_sharded_memory_config((1, 1, 100, 64), ttnn.CoreGrid(y=2, x=4), ttnn.ShardStrategy.HEIGHT)


def test_unknown_names_say_they_are_not_emulated():
    with pytest.raises(AttributeError, match=r"^ttnn emulator: ttnn\.no_such_op is not emulated \(see docs/emulator\.md\)$"):
        _ = ttnn.no_such_op
    with pytest.raises(AttributeError, match=r"ttnn\.experimental\.no_such_op is not emulated"):
        _ = ttnn.experimental.no_such_op
    assert getattr(ttnn, "no_such_op", None) is None
