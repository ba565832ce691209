"""Data-movement ops: reshape, permute, transpose, concat, slice, layout and
memory-config conversions, embedding, clone and copy.

Every op writes a fresh output buffer (real ttnn can return a view for some
reshapes; the emulator always copies, which only adds allocations).
"""

from __future__ import annotations

import builtins
from typing import Any, Optional
from collections.abc import Sequence

import torch
import torch.nn.functional as F

from ..decorators import operation
from ..tensor import Tensor
from ..types import DRAM_MEMORY_CONFIG, DataType, Layout, MemoryConfig, Shape
from ._dispatch import run


@operation("ttnn.reshape")
def reshape(
    input_tensor: Tensor, shape: Sequence[int], *, memory_config: Optional[MemoryConfig] = None, **_: Any
) -> Tensor:
    """Same values, new shape (a Python shape: baked into a trace). A view of the input's
    buffer when the pages stay the same (see `view`), else a copy."""
    target = resolve_shape(input_tensor.shape, shape)
    if memory_config is None or memory_config == input_tensor.memory_config():
        same = view(input_tensor, target)
        if same is not None:
            return same

    def fn(a: torch.Tensor) -> torch.Tensor:
        return a.reshape(target)

    return run("ttnn.reshape", [input_tensor], fn, memory_config=memory_config, host_ok=True)


def resolve_shape(current: Sequence[int], shape: Sequence[int]) -> tuple[int, ...]:
    """`shape` with a -1 resolved against the volume of `current`."""
    dims = [int(d) for d in shape]
    if -1 in dims:
        known = 1
        for d in dims:
            known *= d if d != -1 else 1
        volume = 1
        for d in current:
            volume *= int(d)
        dims[dims.index(-1)] = volume // max(known, 1)
    return tuple(dims)


def view(tensor: Tensor, shape: Sequence[int]) -> Optional[Tensor]:
    """The device tensor `tensor` seen with another shape, sharing its buffer (no allocation,
    as ttnn 0.81.1's reshape, squeeze and unsqueeze do, measured), when its pages do not
    change: same last dimension, and for TILE layout the same rows of tiles (the second-last
    dimension unchanged or a multiple of the tile height in both shapes). None otherwise."""
    buffer = tensor._buffer
    if buffer is None:
        return None
    old, new = tuple(tensor.shape), tuple(int(d) for d in shape)
    volume = 1
    for d in new:
        volume *= d
    if volume != tensor.shape.volume() or not old or not new or old[-1] != new[-1]:
        return None
    if tensor.layout == Layout.TILE:
        old_h, new_h = old[-2] if len(old) > 1 else 1, new[-2] if len(new) > 1 else 1
        if old_h != new_h and (old_h % 32 or new_h % 32):
            return None
    out = Tensor.on_device(tensor.spec._replace(shape=Shape(new)), buffer)
    out._chip = tensor._chip
    return out


@operation("ttnn.permute")
def permute(
    input_tensor: Tensor, dims: Sequence[int], *, memory_config: Optional[MemoryConfig] = None, **_: Any
) -> Tensor:
    order = tuple(int(d) for d in dims)

    def fn(a: torch.Tensor) -> torch.Tensor:
        return a.permute(order).contiguous()

    return run("ttnn.permute", [input_tensor], fn, memory_config=memory_config)


@operation("ttnn.transpose")
def transpose(
    input_tensor: Tensor, dim1: int, dim2: int, *, memory_config: Optional[MemoryConfig] = None, **_: Any
) -> Tensor:
    def fn(a: torch.Tensor) -> torch.Tensor:
        return a.transpose(dim1, dim2).contiguous()

    return run("ttnn.transpose", [input_tensor], fn, memory_config=memory_config)


@operation("ttnn.concat")
def concat(
    tensors: Sequence[Tensor],
    dim: int = 0,
    *,
    memory_config: Optional[MemoryConfig] = None,
    output_tensor: Optional[Tensor] = None,
    **_: Any,
) -> Tensor:
    def fn(*values: torch.Tensor) -> torch.Tensor:
        return torch.cat(values, dim=dim)

    if memory_config is None and output_tensor is None and tensors and not tensors[0].is_sharded():
        memory_config = DRAM_MEMORY_CONFIG  # interleaved inputs, even in L1: a DRAM output (measured)
    return run("ttnn.concat", list(tensors), fn, memory_config=memory_config, output_tensor=output_tensor)


@operation("ttnn.slice")
def slice(  # noqa: A001 - ttnn's name
    input_tensor: Tensor,
    slice_start: Sequence[int],
    slice_end: Sequence[int],
    slice_step: Optional[Sequence[int]] = None,
    *,
    memory_config: Optional[MemoryConfig] = None,
    **_: Any,
) -> Tensor:
    """input[start:end:step] per dimension; the bounds are baked into a trace."""
    steps = list(slice_step) if slice_step is not None else [1] * len(slice_start)
    index = tuple(
        builtins.slice(int(s), int(e), int(st))
        for s, e, st in zip(slice_start, slice_end, steps)
    )

    def fn(a: torch.Tensor) -> torch.Tensor:
        return a[index].contiguous()

    return run("ttnn.slice", [input_tensor], fn, memory_config=memory_config)


@operation("ttnn.to_layout")
def to_layout(
    tensor: Tensor,
    layout: Layout,
    dtype: Optional[DataType] = None,
    memory_config: Optional[MemoryConfig] = None,
    **_: Any,
) -> Tensor:
    """Tilize/untilize; returns the input itself when nothing changes (as ttnn does)."""
    if tensor.layout == layout and (dtype is None or dtype == tensor.dtype) and (
        memory_config is None or memory_config == tensor.memory_config()
    ):
        return tensor

    def fn(a: torch.Tensor) -> torch.Tensor:
        return a

    return run(
        "ttnn.to_layout", [tensor], fn, dtype=dtype, layout=layout, memory_config=memory_config, host_ok=True
    )


@operation("ttnn.embedding")
def embedding(
    input_tensor: Tensor,
    weight: Tensor,
    *,
    padding_idx: Optional[int] = None,
    layout: Layout = Layout.ROW_MAJOR,
    embeddings_type: Any = None,
    dtype: Optional[DataType] = None,
    output_tensor: Optional[Tensor] = None,
    memory_config: Optional[MemoryConfig] = None,
    **_: Any,
) -> Tensor:
    """Rows of `weight` selected by the integer ids in `input_tensor`. As in ttnn 0.81.1
    (measured), the ids are read as [batch = dim 0, sentence = last dim] and the output is
    [batch, sentence, hidden]: a decode's [1, 1, 1, 32] tokens give [1, 32, hidden]."""

    def fn(ids: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        table = w.reshape(-1, w.shape[-1])
        rows = ids.reshape(ids.shape[0] if ids.dim() > 1 else 1, ids.shape[-1]) if ids.dim() else ids.reshape(1, 1)
        return F.embedding(rows.long().clamp(0, table.shape[0] - 1), table)

    return run(
        "ttnn.embedding",
        [input_tensor, weight],
        fn,
        dtype=dtype if dtype is not None else weight.dtype,
        layout=layout,
        memory_config=memory_config,
        output_tensor=output_tensor,
    )


@operation("ttnn.clone")
def clone(
    input_tensor: Tensor,
    *,
    memory_config: Optional[MemoryConfig] = None,
    dtype: Optional[DataType] = None,
    **_: Any,
) -> Tensor:
    def fn(a: torch.Tensor) -> torch.Tensor:
        return a

    return run("ttnn.clone", [input_tensor], fn, dtype=dtype, memory_config=memory_config)


@operation("ttnn.copy")
def copy(input_a: Tensor, input_b: Tensor, **_: Any) -> Tensor:
    """Copy `input_a`'s values into the existing device tensor `input_b` (in place)."""

    def fn(a: torch.Tensor) -> torch.Tensor:
        return a

    return run("ttnn.copy", [input_a], fn, output_tensor=input_b)
