"""Replay verification reads every chip of a mesh tensor and its copies put each chip's part
back on that chip, so an eager re-run on copies computes what the replay computes."""

from __future__ import annotations

import torch

from ttrecord import emulator as ttnn
from ttrecord.recorder.verify.mesh import copy_spec, read
import pytest

pytestmark = pytest.mark.slow


def test_a_mesh_tensor_round_trips_chip_by_chip():
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(1, 2))
    try:
        x = torch.randn(1, 1, 32, 128)
        t = ttnn.from_torch(x, dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT, device=mesh,
                            mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=3))
        data = read(ttnn, t)
        assert data.shape == (2, 1, 32, 64)  # both chips, not chip 0 alone
        spec = {"dtype": t.dtype, "layout": t.layout, "device": mesh, "memory_config": t.memory_config()}
        copy = ttnn.from_torch(data, **copy_spec(ttnn, spec))
        assert list(copy.shape) == list(t.shape)
        for a, b in zip(ttnn.get_device_tensors(copy), ttnn.get_device_tensors(t)):
            assert torch.equal(ttnn.to_torch(a), ttnn.to_torch(b))
    finally:
        ttnn.close_mesh_device(mesh)


def test_one_chip_is_plain_to_torch():
    dev = ttnn.open_device(device_id=0)
    try:
        t = ttnn.from_torch(torch.ones(32, 32), dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT, device=dev)
        spec = {"dtype": t.dtype, "device": dev}
        assert read(ttnn, t).shape == (32, 32) and copy_spec(ttnn, spec) is spec
    finally:
        ttnn.close_device(dev)
