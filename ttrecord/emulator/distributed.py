"""Mesh mappers/composers and `manage_device`.

The emulator keeps one memory per mesh (every tensor is replicated on all chips),
so `ReplicateTensorToMesh` is the only mapper; a composer concatenates the
replicas as real ttnn does when reading a replicated tensor back.
"""

from __future__ import annotations

import contextlib
from typing import Any, Iterator

import torch


class ReplicateTensorToMesh:
    """Put the same tensor on every device of the mesh (the emulator's only layout)."""

    def __init__(self, mesh_device: Any) -> None:
        self.mesh_device = mesh_device


class ShardTensorToMesh:
    """Splitting a tensor across chips needs per-chip memory, which the emulator does not model."""

    def __init__(self, mesh_device: Any, dim: int) -> None:
        raise NotImplementedError(
            "ttnn emulator: ShardTensorToMesh is not emulated (one replicated memory per mesh)"
        )


class ConcatMeshToTensor:
    """Read a mesh tensor back as the concatenation of every device's copy along `dim`."""

    def __init__(self, mesh_device: Any, dim: int) -> None:
        self.mesh_device = mesh_device
        self.dim = dim

    def compose(self, values: torch.Tensor) -> torch.Tensor:
        return torch.cat([values] * self.mesh_device.get_num_devices(), dim=self.dim)


def replicate_tensor_to_mesh_mapper(mesh_device: Any) -> ReplicateTensorToMesh:
    return ReplicateTensorToMesh(mesh_device)


def concat_mesh_to_tensor_composer(mesh_device: Any, dim: int) -> ConcatMeshToTensor:
    return ConcatMeshToTensor(mesh_device, dim)


@contextlib.contextmanager
def manage_device(device_id: int, **kwargs: Any) -> Iterator[Any]:
    """Open a device for the `with` block and close it afterwards."""
    from .device import close_device, open_device

    device = open_device(device_id=device_id, **kwargs)
    try:
        yield device
    finally:
        close_device(device)
