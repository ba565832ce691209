"""An emulated mesh has one memory per chip: sharded tensors hold different values on
each chip at one address, collectives combine the chips, and traces replay per chip."""

from __future__ import annotations

import pytest
import torch

from ttrecord import emulator as ttnn


@pytest.fixture
def mesh():
    m = ttnn.open_mesh_device(ttnn.MeshShape(1, 2), trace_region_size=1_000_000)
    try:
        yield m
    finally:
        ttnn.close_mesh_device(m)


@pytest.fixture
def mesh2x2():
    m = ttnn.open_mesh_device(ttnn.MeshShape(2, 2), trace_region_size=1_000_000)
    try:
        yield m
    finally:
        ttnn.close_mesh_device(m)


def shard(mesh, x, dim):
    return ttnn.from_torch(x, dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT, device=mesh,
                           mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=dim))


def test_sharded_tensor_has_each_chip_its_own_chunk_at_one_address(mesh):
    x = torch.randn(1, 1, 32, 128)
    t = shard(mesh, x, 3)
    assert list(t.shape) == [1, 1, 32, 64]
    chips = ttnn.get_device_tensors(t)
    assert len(chips) == 2 and all(c.buffer_address() == t.buffer_address() for c in chips)
    assert torch.equal(ttnn.to_torch(chips[0]), x[..., :64]) and torch.equal(ttnn.to_torch(chips[1]), x[..., 64:])
    assert torch.equal(ttnn.to_torch(t, mesh_composer=ttnn.ConcatMeshToTensor(mesh, dim=3)), x)


def test_ops_run_per_chip_and_replicate_keeps_chips_equal(mesh):
    x = torch.randn(1, 1, 32, 128)
    w = torch.randn(64, 32)
    tw = ttnn.from_torch(w, dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT, device=mesh,
                         mesh_mapper=ttnn.ReplicateTensorToMesh(mesh))
    out = ttnn.matmul(shard(mesh, x, 3), tw)
    got = ttnn.to_torch(out, mesh_composer=ttnn.ConcatMeshToTensor(mesh, dim=0))
    assert torch.allclose(got[0], x[..., :64] @ w, atol=1e-4) and torch.allclose(got[1], x[..., 64:] @ w, atol=1e-4)


def test_shard_2d_and_compose_2d(mesh2x2):
    x = torch.randn(1, 1, 64, 128)
    t = ttnn.from_torch(x, dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT, device=mesh2x2,
                        mesh_mapper=ttnn.ShardTensor2dMesh(mesh2x2, mesh_shape=(2, 2), dims=(2, 3)))
    assert list(t.shape) == [1, 1, 32, 64]
    assert torch.equal(ttnn.to_torch(ttnn.get_device_tensors(t)[1]), x[..., :32, 64:])
    back = ttnn.to_torch(t, mesh_composer=ttnn.ConcatMesh2dToTensor(mesh2x2, mesh_shape=(2, 2), dims=(2, 3)))
    assert torch.equal(back, x)


def test_collectives_combine_the_chips(mesh2x2):
    x = torch.randn(1, 1, 32, 256)
    t = shard(mesh2x2, x, 3)  # chip i holds columns 64i..64i+63
    parts = list(torch.chunk(x, 4, dim=3))
    gathered = ttnn.get_device_tensors(ttnn.all_gather(t, dim=3))
    assert all(torch.equal(ttnn.to_torch(g), x) for g in gathered)
    rows = ttnn.get_device_tensors(ttnn.all_gather(t, dim=3, cluster_axis=1))  # along each mesh row
    assert torch.equal(ttnn.to_torch(rows[2]), torch.cat(parts[2:], dim=3))
    total = parts[0] + parts[1] + parts[2] + parts[3]
    reduced = ttnn.get_device_tensors(ttnn.all_reduce(t))
    assert all(torch.allclose(ttnn.to_torch(r), total, atol=1e-5) for r in reduced)
    scattered = ttnn.get_device_tensors(ttnn.reduce_scatter(t, dim=3))
    assert torch.allclose(ttnn.to_torch(scattered[3]), total[..., 48:], atol=1e-5)


def test_all_gather_inside_a_trace_replays_with_new_chip_values(mesh):
    x = torch.randn(1, 1, 32, 128)
    inp = shard(mesh, x, 3)
    sem = ttnn.create_global_semaphore(mesh, ttnn.CoreRangeSet({ttnn.CoreRange((0, 0), (0, 0))}), 0)
    ttnn.experimental.all_gather_async(ttnn.relu(inp), dim=3, multi_device_global_semaphore=sem, num_links=1)
    tid = ttnn.begin_trace_capture(mesh, cq_id=0)
    out = ttnn.experimental.all_gather_async(ttnn.relu(inp), dim=3, multi_device_global_semaphore=sem, num_links=1)
    ttnn.end_trace_capture(mesh, tid, cq_id=0)
    y = torch.randn(1, 1, 32, 128)
    host = ttnn.from_torch(y, dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT, mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=3))
    ttnn.copy_host_to_device_tensor(host, inp)
    ttnn.execute_trace(mesh, tid, cq_id=0)
    for chip in ttnn.get_device_tensors(out):
        assert torch.equal(ttnn.to_torch(chip), torch.relu(y))
    ttnn.release_trace(mesh, tid)


def test_chip_view_ops_run_on_that_chip_only(mesh):
    x = torch.randn(1, 1, 32, 128)
    t = shard(mesh, x, 3)
    second = ttnn.get_device_tensors(t)[1]
    doubled = ttnn.multiply(second, 2.0)
    assert torch.equal(ttnn.to_torch(doubled), x[..., 64:] * 2)
    with pytest.raises(RuntimeError, match="combining device tensors from different buffers"):
        ttnn.combine_device_tensors([ttnn.get_device_tensors(t)[0], doubled])
    assert ttnn.combine_device_tensors(ttnn.get_device_tensors(t)).buffer_address() == t.buffer_address()


def test_mesh_coordinates_are_values_ops_take_as_a_set():
    """DeepSeek's MLA passes `mesh_coords=set(MeshCoordinate(row, col) ...)` to paged_update_cache."""
    coords = {ttnn.MeshCoordinate(0, c) for c in range(2)} | {ttnn.MeshCoordinate([0, 1]), ttnn.MeshCoordinate(coords=[0, 0])}
    assert len(coords) == 2 and ttnn.MeshCoordinate([0, 1]) in coords
    c = ttnn.MeshCoordinate(1, 3)
    assert (c[0], c[1], c.dims(), list(c)) == (1, 3, 2, [1, 3])
    assert repr(c) == "MeshCoordinate([1, 3])" and ttnn.MeshCoordinate(1, 2, 3).dims() == 3


def test_from_host_shards_gives_each_chip_its_own_host_tensor(mesh):
    """UFLD's data-parallel runner builds its input this way: one host tensor per chip."""
    shards = [ttnn.from_torch(torch.full((1, 1, 32, 32), float(i)), dtype=ttnn.bfloat16) for i in range(2)]
    host = ttnn.from_host_shards(shards, mesh.shape)
    assert host.storage_type() == ttnn.StorageType.HOST and list(host.shape) == [1, 1, 32, 32]
    on_mesh = host.to(mesh)
    assert [ttnn.to_torch(t)[0, 0, 0, 0].item() for t in ttnn.get_device_tensors(on_mesh)] == [0.0, 1.0]
    with pytest.raises(RuntimeError, match="2 devices"):
        ttnn.from_host_shards(shards[:1], mesh.shape)
