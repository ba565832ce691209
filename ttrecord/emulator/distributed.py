"""Mesh mappers and composers, device tensors of a mesh tensor, and `manage_device`.

Each chip of an emulated mesh has its own memory; a mesh tensor has one shape (the
per-chip shape, as in ttnn) and each chip's values at the same address. A mapper splits
a torch tensor into one value per chip (chip index = row × columns + column); a composer
joins every chip's values back into one torch tensor.
"""

from __future__ import annotations

from .errors import NotEmulatedAttributes

import contextlib
from typing import Any, Optional
from collections.abc import Iterator, Sequence

import torch



def _grid(mesh_device: Any, mesh_shape: Optional[Sequence[int]] = None) -> tuple[int, int]:
    shape = tuple(mesh_shape) if mesh_shape is not None else tuple(mesh_device.shape)
    if len(shape) == 1:
        return 1, shape[0]
    return int(shape[0]), int(shape[1])


class TensorToMesh(NotEmulatedAttributes):
    """Splits a torch tensor into per-chip values: `placements[axis]` is None (replicate)
    or the tensor dim that mesh axis shards."""

    def __init__(self, mesh_device: Any, placements: Sequence[Optional[int]], mesh_shape: Any = None) -> None:
        self.mesh_device = mesh_device
        self.rows, self.cols = _grid(mesh_device, mesh_shape)
        self.placements = tuple(placements)

    def map(self, values: torch.Tensor) -> list[torch.Tensor]:
        row_dim, col_dim = self.placements
        rows = list(torch.chunk(values, self.rows, dim=row_dim)) if row_dim is not None else [values] * self.rows
        out = []
        for row in rows:
            cols = list(torch.chunk(row, self.cols, dim=col_dim)) if col_dim is not None else [row] * self.cols
            out += [c.contiguous() for c in cols]
        return out


class MeshToTensor(NotEmulatedAttributes):
    """Joins per-chip values: concatenated along `dims[0]` over rows and `dims[1]` over columns."""

    def __init__(self, mesh_device: Any, dims: Sequence[Optional[int]], mesh_shape: Any = None) -> None:
        self.mesh_device = mesh_device
        self.rows, self.cols = _grid(mesh_device, mesh_shape)
        self.dims = tuple(dims)

    def compose(self, values: list[torch.Tensor]) -> torch.Tensor:
        row_dim, col_dim = self.dims
        if len(values) == 1:
            return values[0]
        rows = []
        for r in range(self.rows):
            chunk = values[r * self.cols : (r + 1) * self.cols]
            rows.append(torch.cat(chunk, dim=col_dim) if col_dim is not None else chunk[0])
        return torch.cat(rows, dim=row_dim) if row_dim is not None else rows[0]


def ReplicateTensorToMesh(mesh_device: Any) -> TensorToMesh:  # noqa: N802 - ttnn's name
    """The same tensor on every chip."""
    return TensorToMesh(mesh_device, (None, None))


def ShardTensorToMesh(mesh_device: Any, dim: int) -> TensorToMesh:  # noqa: N802
    """Chunk `dim` over every chip of the mesh, in row-major chip order."""
    mapper = TensorToMesh(mesh_device, (None, dim))
    mapper.cols, mapper.rows = mapper.rows * mapper.cols, 1
    return mapper


def ShardTensor2dMesh(mesh_device: Any, mesh_shape: Sequence[int], dims: Sequence[Optional[int]]) -> TensorToMesh:  # noqa: N802
    """Shard dims[0] over mesh rows and dims[1] over columns (None: replicate on that axis)."""
    return TensorToMesh(mesh_device, dims, mesh_shape)


def ConcatMeshToTensor(mesh_device: Any, dim: int) -> MeshToTensor:  # noqa: N802
    """Every chip's values concatenated along `dim`, in chip order."""
    composer = MeshToTensor(mesh_device, (None, dim))
    composer.cols, composer.rows = composer.rows * composer.cols, 1
    return composer


def ConcatMesh2dToTensor(mesh_device: Any, mesh_shape: Sequence[int], dims: Sequence[int]) -> MeshToTensor:  # noqa: N802
    return MeshToTensor(mesh_device, dims, mesh_shape)


def replicate_tensor_to_mesh_mapper(mesh_device: Any) -> TensorToMesh:
    return ReplicateTensorToMesh(mesh_device)


def shard_tensor_to_mesh_mapper(mesh_device: Any, dim: int) -> TensorToMesh:
    return ShardTensorToMesh(mesh_device, dim)


def concat_mesh_to_tensor_composer(mesh_device: Any, dim: int) -> MeshToTensor:
    return ConcatMeshToTensor(mesh_device, dim)


class PlacementReplicate(NotEmulatedAttributes):
    def __repr__(self) -> str:
        return "PlacementReplicate()"


class PlacementShard(NotEmulatedAttributes):
    def __init__(self, dim: int) -> None:
        self.dim = int(dim)

    def __repr__(self) -> str:
        return f"PlacementShard({self.dim})"


def _by_placements(placements: Sequence[Any], mesh_shape_override: Any = None, mesh_offset_override: Any = None) -> Any:
    return locals()


def _by_dims(row_dim: Optional[int] = None, col_dim: Optional[int] = None, mesh_shape_override: Any = None,
             mesh_offset_override: Any = None) -> Any:
    return locals()


class MeshMapperConfig(NotEmulatedAttributes):
    """One placement per mesh axis; or, as ttnn 0.81.1's 2D form, `row_dim`/`col_dim` (None:
    replicate along that axis)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        first = args[0] if args else kwargs.get("placements")
        if isinstance(first, (list, tuple)):
            form = _by_placements(*args, **kwargs)
            placements = list(form["placements"])
        else:
            form = _by_dims(*args, **kwargs)
            placements = [PlacementReplicate() if d is None else PlacementShard(d) for d in (form["row_dim"], form["col_dim"])]
        self.placements = placements
        self.mesh_shape_override = form["mesh_shape_override"]
        self.mesh_offset_override = form["mesh_offset_override"]

    __init__.overloads = (_by_placements, _by_dims)  # type: ignore[attr-defined]


class MeshComposerConfig(NotEmulatedAttributes):
    """The tensor dim each mesh axis concatenates along: `MeshComposerConfig(dims)` or
    `MeshComposerConfig(row_dim, col_dim)`."""

    def __init__(self, *args: Any, dims: Any = None, row_dim: Optional[int] = None, col_dim: Optional[int] = None,
                 mesh_shape_override: Any = None, mesh_offset_override: Any = None) -> None:
        if dims is None:
            dims = args if args else tuple(d for d in (row_dim, col_dim) if d is not None)
        if len(dims) == 1 and isinstance(dims[0], (list, tuple)):
            dims = tuple(dims[0])
        self.dims = [int(d) for d in dims]
        self.mesh_shape_override = mesh_shape_override
        self.mesh_offset_override = mesh_offset_override


def create_mesh_mapper(mesh_device: Any = None, config: Optional[MeshMapperConfig] = None, *,
                       mesh_shape: Any = None) -> TensorToMesh:
    """ND mapper: one placement per mesh axis (PlacementShard(dim) or PlacementReplicate());
    `mesh_shape` instead of a device maps for a mesh of that shape."""
    if config is None:
        raise TypeError("create_mesh_mapper(): config is required")
    if mesh_shape is not None and mesh_device is None:
        config = MeshMapperConfig(config.placements, config.mesh_shape_override or mesh_shape)
    elif mesh_device is not None and not hasattr(mesh_device, "chip_ids"):  # create_mesh_mapper(mesh_shape, config)
        config = MeshMapperConfig(config.placements, config.mesh_shape_override or mesh_device)
        mesh_device = None
    dims = [p.dim if isinstance(p, PlacementShard) else None for p in config.placements]
    shape = config.mesh_shape_override
    if len(dims) == 1:
        mapper = TensorToMesh(mesh_device, (None, dims[0]), shape)
        mapper.cols, mapper.rows = mapper.rows * mapper.cols, 1
        return mapper
    return TensorToMesh(mesh_device, dims[:2], shape)


def create_mesh_composer(mesh_device: Any, config: MeshComposerConfig) -> MeshToTensor:
    dims = config.dims
    if len(dims) == 1:
        composer = MeshToTensor(mesh_device, (None, dims[0]), config.mesh_shape_override)
        composer.cols, composer.rows = composer.rows * composer.cols, 1
        return composer
    return MeshToTensor(mesh_device, dims[:2], config.mesh_shape_override)


def get_device_tensors(tensor: Any) -> list:
    """One tensor per chip: views of the mesh tensor's buffer on that chip (same address),
    or each chip's host values of a multi-device host tensor."""
    from .tensor import Tensor

    out = []
    for chip in range(tensor.num_chips):
        if tensor._buffer is None:
            out.append(Tensor.on_host(tensor.spec, tensor._values(chip)))
            continue
        view = Tensor.on_device(tensor.spec, tensor._buffer)
        view._chip = chip if tensor._chip is None else tensor._chip
        out.append(view)
    return out


def combine_device_tensors(tensors: Sequence[Any]) -> Any:
    """The inverse of get_device_tensors: per-chip views of one buffer become the mesh tensor;
    host tensors become one multi-device host tensor."""
    from .tensor import Tensor

    first = tensors[0]
    if first._buffer is None:
        return Tensor.on_host(first.spec, [t._values() for t in tensors])
    if all(t._buffer is first._buffer for t in tensors) and [t._chip for t in tensors] == list(range(len(tensors))):
        return Tensor.on_device(first.spec, first._buffer)
    raise RuntimeError(
        "ttnn emulator: combining device tensors from different buffers is not emulated "
        "(see docs/emulator.md); combine host tensors and move the result to the mesh"
    )


def from_host_shards(tensors: Sequence[Any], mesh_shape: Any) -> Any:
    """One multi-device host tensor from one host tensor per device of a mesh of `mesh_shape`
    (row-major), as data-parallel runners build their inputs; `to(mesh)` or
    copy_host_to_device_tensor then puts each on its device."""
    from .tensor import Tensor

    tensors = list(tensors)
    size = 1
    for d in mesh_shape:
        size *= int(d)
    if len(tensors) != size:
        raise RuntimeError(f"from_host_shards(): {len(tensors)} tensors for a mesh of {size} devices")
    if not tensors or any(t._buffer is not None or t.num_chips != 1 for t in tensors):
        raise RuntimeError("from_host_shards(): every tensor must be a single-device host tensor")
    first = tensors[0]
    if any(t.spec != first.spec for t in tensors):
        raise RuntimeError("from_host_shards(): every tensor must have the same spec")
    return Tensor.on_host(first.spec, [t._values() for t in tensors])


@contextlib.contextmanager
def distribute(default: Any) -> Iterator[None]:
    """Make `ttnn.from_torch` use `default` as its mesh_mapper (a TensorToMesh) or
    `ttnn.to_torch` use it as its mesh_composer (a MeshToTensor) inside the block, by
    rebinding them on the ttnn module as ttnn 0.81.1's ttnn.distribute does."""
    import functools
    import sys

    ttnn: Any = sys.modules[__name__.rsplit(".", 1)[0]]
    original_from_torch, original_to_torch = ttnn.from_torch, ttnn.to_torch
    try:
        if isinstance(default, TensorToMesh):
            ttnn.from_torch = functools.partial(original_from_torch, mesh_mapper=default)
        elif isinstance(default, MeshToTensor):
            ttnn.to_torch = functools.partial(original_to_torch, mesh_composer=default)
        else:
            raise ValueError("Argument must be an instance of either TensorToMesh or MeshToTensor.")
        yield
    finally:
        ttnn.from_torch, ttnn.to_torch = original_from_torch, original_to_torch


@contextlib.contextmanager
def manage_device(device_id: int, **kwargs: Any) -> Iterator[Any]:
    """Open a device for the `with` block and close it afterwards."""
    from .device import close_device, open_device

    device = open_device(device_id=device_id, **kwargs)
    try:
        yield device
    finally:
        close_device(device)
