"""Collective ops across the chips of a mesh: all_gather, reduce_scatter, all_reduce and
the experimental async forms tt-metal's models call. Each chip's values are read from its
own memory and each chip's result written to its own memory, inside or outside a trace
(a replay recomputes the collective from what every chip holds then).

`cluster_axis` 0 runs the collective down each mesh column (chips of one column form a
group), 1 along each row, None over the whole mesh; semaphores and link counts only
pace the hardware and are accepted as given.
"""

from __future__ import annotations

from typing import Any, Optional, cast
from collections.abc import Callable

import torch

from ..decorators import operation
from ..tensor import Tensor
from ..types import MemoryConfig
from ._dispatch import as_float, run


def _groups(mesh: Any, cluster_axis: Optional[int]) -> list[list[int]]:
    """Chip indices of each group, in group order."""
    shape = tuple(mesh.shape)
    rows, cols = (shape[0], shape[1]) if len(shape) == 2 else (1, shape[0])
    if cluster_axis is None:
        return [list(range(rows * cols))]
    if int(cluster_axis) == 0:
        return [[r * cols + c for r in range(rows)] for c in range(cols)]
    return [[r * cols + c for c in range(cols)] for r in range(rows)]


def _collective(mesh: Any, cluster_axis: Optional[int], per_group: Callable[[list[torch.Tensor], int], torch.Tensor]) -> Callable[[list[list[torch.Tensor]]], list[torch.Tensor]]:
    """fn(per-chip inputs) → per-chip outputs, computing per_group(group values, index in group)."""
    groups = _groups(mesh, cluster_axis)

    def fn(per_chip: list[list[torch.Tensor]]) -> list[torch.Tensor]:
        out: list[Any] = [None] * len(per_chip)
        for group in groups:
            values = [per_chip[c][0] for c in group]
            for position, chip in enumerate(group):
                out[chip] = per_group(values, position)
        return out

    return fn


def _gather(dim: int) -> Callable[[list[torch.Tensor], int], torch.Tensor]:
    def per_group(values: list[torch.Tensor], position: int) -> torch.Tensor:
        return torch.cat(values, dim=dim)

    return per_group


def _reduce_scatter(dim: int) -> Callable[[list[torch.Tensor], int], torch.Tensor]:
    def per_group(values: list[torch.Tensor], position: int) -> torch.Tensor:
        total = cast(torch.Tensor, sum(as_float(v) for v in values))  # values is never empty
        return torch.chunk(total, len(values), dim=dim)[position].contiguous()

    return per_group


def _all_reduce(values: list[torch.Tensor], position: int) -> torch.Tensor:
    return cast(torch.Tensor, sum(as_float(v) for v in values))


def _mesh(tensor: Tensor, mesh_device: Any) -> Any:
    return mesh_device if mesh_device is not None else tensor.device()


def _ccl(name: str, tensor: Tensor, per_group: Callable, cluster_axis: Optional[int], mesh_device: Any,
         memory_config: Optional[MemoryConfig], output_tensor: Optional[Tensor]) -> Tensor:
    mesh = _mesh(tensor, mesh_device)
    if mesh is None:
        raise RuntimeError(f"TT_FATAL: {name}: input tensor must be on a mesh device")
    fn = _collective(mesh, cluster_axis, per_group)
    return run(name, [tensor], fn, memory_config=memory_config, output_tensor=output_tensor, collective=True)


@operation("ttnn.all_gather")
def all_gather(
    input_tensor: Tensor,
    dim: int,
    *,
    cluster_axis: Optional[int] = None,
    mesh_device: Any = None,
    memory_config: Optional[MemoryConfig] = None,
    output_tensor: Optional[Tensor] = None,
    num_links: Any = None,
    topology: Any = None,
    **_: Any,
) -> Tensor:
    """Every chip gets its group's tensors concatenated along `dim`."""
    return _ccl("ttnn.all_gather", input_tensor, _gather(dim), cluster_axis, mesh_device, memory_config, output_tensor)


@operation("ttnn.reduce_scatter")
def reduce_scatter(
    input_tensor: Tensor,
    dim: int,
    *,
    cluster_axis: Optional[int] = None,
    mesh_device: Any = None,
    memory_config: Optional[MemoryConfig] = None,
    output_tensor: Optional[Tensor] = None,
    **_: Any,
) -> Tensor:
    """The group's sum, split along `dim`: chip k of the group keeps chunk k."""
    return _ccl("ttnn.reduce_scatter", input_tensor, _reduce_scatter(dim), cluster_axis, mesh_device, memory_config, output_tensor)


@operation("ttnn.all_reduce")
def all_reduce(
    input_tensor: Tensor,
    *,
    cluster_axis: Optional[int] = None,
    mesh_device: Any = None,
    memory_config: Optional[MemoryConfig] = None,
    **_: Any,
) -> Tensor:
    """Every chip gets the sum over its group."""
    return _ccl("ttnn.all_reduce", input_tensor, _all_reduce, cluster_axis, mesh_device, memory_config, None)


@operation("ttnn.experimental.all_gather_async")
def all_gather_async(
    input_tensor: Tensor,
    dim: Optional[int] = None,
    *args: Any,
    cluster_axis: Optional[int] = None,
    mesh_device: Any = None,
    memory_config: Optional[MemoryConfig] = None,
    persistent_output_buffer: Optional[Tensor] = None,
    persistent_output_tensor: Optional[Tensor] = None,
    **kwargs: Any,
) -> Tensor:
    """all_gather with semaphores; a persistent output buffer is written in place."""
    dim = kwargs.pop("gather_dim", dim)
    out = persistent_output_buffer if persistent_output_buffer is not None else persistent_output_tensor
    return _ccl("ttnn.experimental.all_gather_async", input_tensor, _gather(int(dim)), cluster_axis, mesh_device, memory_config, out)


@operation("ttnn.experimental.reduce_scatter_minimal_async")
def reduce_scatter_minimal_async(
    input_tensor: Tensor,
    persistent_output_buffers: Any = None,
    dim: Optional[int] = None,
    *args: Any,
    cluster_axis: Optional[int] = None,
    mesh_device: Any = None,
    memory_config: Optional[MemoryConfig] = None,
    **kwargs: Any,
) -> Tensor:
    """reduce_scatter with semaphores; the last persistent buffer (if any) is the output."""
    if isinstance(persistent_output_buffers, int) and dim is None:
        persistent_output_buffers, dim = None, persistent_output_buffers
    out = persistent_output_buffers[-1] if persistent_output_buffers else None
    return _ccl("ttnn.experimental.reduce_scatter_minimal_async", input_tensor, _reduce_scatter(int(dim)), cluster_axis,  # type: ignore[arg-type]  # None raises, as in ttnn
                mesh_device, memory_config, out)


@operation("ttnn.experimental.all_reduce_async")
def all_reduce_async(
    input_tensor: Tensor,
    *args: Any,
    cluster_axis: Optional[int] = None,
    mesh_device: Any = None,
    memory_config: Optional[MemoryConfig] = None,
    **kwargs: Any,
) -> Tensor:
    """all_reduce with semaphores (sum over the group)."""
    return _ccl("ttnn.experimental.all_reduce_async", input_tensor, _all_reduce, cluster_axis, mesh_device, memory_config, None)
