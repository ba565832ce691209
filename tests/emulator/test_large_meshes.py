"""Meshes up to a Galaxy (8×4) and a T3K line (1×8) open, shard, run the collectives and
capture/replay a trace; each chip's memory costs nothing until a buffer on it is written."""

from __future__ import annotations

import os

import pytest
import torch

from ttrecord import emulator as ttnn
from ttrecord.emulator import device as emulated_device


def _reserved_bytes(mesh) -> int:
    """Bytes of host memory the mesh's per-chip device memories hold."""
    return sum(a.nbytes for chip in mesh.chip_memories for memory in chip.values() for a in (memory._data, memory._high))


def _rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


@pytest.fixture(params=[(8, 4), (1, 8)], ids=["galaxy-8x4", "t3k-1x8"])
def big_mesh(request):
    m = ttnn.open_mesh_device(ttnn.MeshShape(*request.param), trace_region_size=1_000_000)
    try:
        yield m
    finally:
        ttnn.close_mesh_device(m)


def test_the_default_system_is_a_galaxy_and_opening_it_costs_nothing():
    assert ttnn.get_num_devices() == 32 and ttnn.get_device_ids() == list(range(32))
    before = _rss()
    mesh = ttnn.open_mesh_device()  # the whole system mesh
    try:
        assert tuple(mesh.shape) == (8, 4) and mesh.get_num_devices() == 32
        assert _reserved_bytes(mesh) == 0
        assert _rss() - before < 4 << 20  # 32 chips × (4 GB DRAM + 1.5 MB L1) opened for < 4 MB
        t = ttnn.from_torch(torch.zeros(1, 1, 32, 32), layout=ttnn.TILE_LAYOUT, device=mesh)
        assert 0 < _reserved_bytes(mesh) <= 32 * 8 * (1 << 16)  # a page row per DRAM bank and chip at most
        assert _rss() - before < 32 << 20
        del t
    finally:
        ttnn.close_mesh_device(mesh)


def test_the_system_is_chosen_by_the_environment(monkeypatch):
    monkeypatch.setenv(emulated_device.SYSTEM_ENV_VAR, "p150x4")
    assert ttnn.get_num_devices() == 4
    with pytest.raises(RuntimeError, match=r"Requested mesh \[1, 8\] needs 8 devices; the emulated system has 4"):
        ttnn.open_mesh_device(ttnn.MeshShape(1, 8))
    monkeypatch.setenv(emulated_device.SYSTEM_ENV_VAR, "t3k")
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(1, 8))
    ttnn.close_mesh_device(mesh)
    monkeypatch.setenv(emulated_device.SYSTEM_ENV_VAR, "2x2")
    assert ttnn.get_num_devices() == 4
    monkeypatch.setenv(emulated_device.SYSTEM_ENV_VAR, "huge")
    with pytest.raises(RuntimeError, match=r"TTRECORD_EMULATOR_SYSTEM='huge' is not a system"):
        ttnn.get_num_devices()


def test_shard_and_compose_on_big_meshes(big_mesh):
    rows, cols = tuple(big_mesh.shape)
    x = torch.randn(1, 1, 32 * rows, 64 * cols)
    two_d = ttnn.from_torch(x, dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT, device=big_mesh,
                            mesh_mapper=ttnn.ShardTensor2dMesh(big_mesh, mesh_shape=(rows, cols), dims=(2, 3)))
    assert list(two_d.shape) == [1, 1, 32, 64]
    chips = ttnn.get_device_tensors(two_d)
    assert len(chips) == rows * cols and len({c.buffer_address() for c in chips}) == 1
    last = chips[-1]
    assert torch.equal(ttnn.to_torch(last), x[..., -32:, -64:])
    composer = ttnn.ConcatMesh2dToTensor(big_mesh, mesh_shape=(rows, cols), dims=(2, 3))
    assert torch.equal(ttnn.to_torch(two_d, mesh_composer=composer), x)
    flat = torch.randn(1, 1, 32, 32 * rows * cols)
    line = ttnn.from_torch(flat, dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT, device=big_mesh,
                           mesh_mapper=ttnn.ShardTensorToMesh(big_mesh, dim=3))
    assert torch.equal(ttnn.to_torch(line, mesh_composer=ttnn.ConcatMeshToTensor(big_mesh, dim=3)), flat)
    mapper = ttnn.create_mesh_mapper(big_mesh, ttnn.MeshMapperConfig([ttnn.PlacementReplicate(), ttnn.PlacementShard(3)]))
    mixed = ttnn.from_torch(x[..., :32, :], dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT, device=big_mesh,
                            mesh_mapper=mapper)
    per_chip = [ttnn.to_torch(c) for c in ttnn.get_device_tensors(mixed)]
    assert all(torch.equal(per_chip[r * cols + 1], x[..., :32, 64:128]) for r in range(rows))  # same on every row


def test_collectives_on_big_meshes(big_mesh):
    rows, cols = tuple(big_mesh.shape)
    n = rows * cols
    x = torch.randn(1, 1, 32, 32 * n)
    t = ttnn.from_torch(x, dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT, device=big_mesh,
                        mesh_mapper=ttnn.ShardTensorToMesh(big_mesh, dim=3))
    parts = list(torch.chunk(x, n, dim=3))
    everything = ttnn.get_device_tensors(ttnn.all_gather(t, dim=3))
    assert torch.equal(ttnn.to_torch(everything[n - 1]), x)
    along_rows = ttnn.get_device_tensors(ttnn.all_gather(t, dim=3, cluster_axis=1))
    assert torch.equal(ttnn.to_torch(along_rows[n - 1]), torch.cat(parts[n - cols:], dim=3))
    down_columns = ttnn.get_device_tensors(ttnn.all_gather(t, dim=3, cluster_axis=0))
    assert torch.equal(ttnn.to_torch(down_columns[cols - 1]), torch.cat(parts[cols - 1::cols], dim=3))
    reduced = ttnn.get_device_tensors(ttnn.all_reduce(t))
    assert torch.allclose(ttnn.to_torch(reduced[n // 2]), sum(parts), atol=1e-4)
    scattered = ttnn.get_device_tensors(ttnn.reduce_scatter(ttnn.all_gather(t, dim=3), dim=3))
    assert torch.allclose(ttnn.to_torch(scattered[1]), n * parts[1], atol=1e-4)


def test_trace_capture_and_replay_on_big_meshes(big_mesh):
    rows, cols = tuple(big_mesh.shape)
    n = rows * cols
    mapper = ttnn.ShardTensorToMesh(big_mesh, dim=3)
    inp = ttnn.from_torch(torch.randn(1, 1, 32, 32 * n), dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT,
                          device=big_mesh, mesh_mapper=mapper)
    sem = ttnn.create_global_semaphore(big_mesh, ttnn.CoreRangeSet({ttnn.CoreRange((0, 0), (0, 0))}), 0)

    def step():
        return ttnn.experimental.all_gather_async(ttnn.relu(inp), dim=3, multi_device_global_semaphore=sem,
                                                  num_links=1, cluster_axis=1)

    step()  # compile
    tid = ttnn.begin_trace_capture(big_mesh, cq_id=0)
    out = step()
    ttnn.end_trace_capture(big_mesh, tid, cq_id=0)
    y = torch.randn(1, 1, 32, 32 * n)
    ttnn.copy_host_to_device_tensor(ttnn.from_torch(y, dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT, mesh_mapper=mapper), inp)
    ttnn.execute_trace(big_mesh, tid, cq_id=0)
    parts = list(torch.chunk(torch.relu(y), n, dim=3))
    chips = ttnn.get_device_tensors(out)
    for row in range(rows):
        expected = torch.cat(parts[row * cols:(row + 1) * cols], dim=3)
        assert torch.equal(ttnn.to_torch(chips[row * cols + cols - 1]), expected), row
    ttnn.release_trace(big_mesh, tid)


def test_submeshes_share_the_chips_memory_but_not_the_allocator():
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(8, 4), trace_region_size=1_000_000)
    try:
        parent = ttnn.from_torch(torch.zeros(32, 32), dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT, device=mesh)
        subs = mesh.create_submeshes(ttnn.MeshShape(2, 4))
        assert len(subs) == 4 and mesh.get_submeshes() == subs
        assert subs[1].get_device_ids() == list(range(8, 16)) and tuple(subs[1].shape) == (2, 4)
        values = torch.randn(32, 32)
        on_sub = ttnn.from_torch(values, dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT, device=subs[1])
        assert on_sub.buffer_address() == parent.buffer_address()  # its own allocator, as measured
        chips = ttnn.get_device_tensors(parent)
        assert torch.equal(ttnn.to_torch(chips[8]), values)  # the same bytes on chip 8
        assert torch.equal(ttnn.to_torch(chips[0]), torch.zeros(32, 32))  # chip 0 is not in submesh 1
        doubled = ttnn.multiply(on_sub, 2.0)
        tid = ttnn.begin_trace_capture(subs[1], cq_id=0)
        out = ttnn.multiply(on_sub, 2.0)
        ttnn.end_trace_capture(subs[1], tid, cq_id=0)
        ttnn.execute_trace(subs[1], tid, cq_id=0)
        assert torch.equal(ttnn.to_torch(out), ttnn.to_torch(doubled))
        single = mesh.create_submesh(ttnn.MeshShape(1, 1), (7, 3))
        assert single.get_device_ids() == [31]
        with pytest.raises(RuntimeError, match="cannot be split into 3x4"):
            mesh.create_submeshes(ttnn.MeshShape(3, 4))
    finally:
        ttnn.close_mesh_device(mesh)
    assert not subs[0].is_open  # closing the parent closes its submeshes
