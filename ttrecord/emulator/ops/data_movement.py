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
from ..types import DataType, Layout, MemoryConfig
from ._dispatch import run


@operation("ttnn.reshape")
def reshape(
    input_tensor: Tensor, shape: Sequence[int], *, memory_config: Optional[MemoryConfig] = None, **_: Any
) -> Tensor:
    """Same values, new shape (a Python shape: baked into a trace)."""
    target = tuple(int(d) for d in shape)

    def fn(a: torch.Tensor) -> torch.Tensor:
        return a.reshape(target)

    return run("ttnn.reshape", [input_tensor], fn, memory_config=memory_config, host_ok=True)


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
    """Rows of `weight` selected by the integer ids in `input_tensor`."""

    def fn(ids: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        table = w.reshape(-1, w.shape[-1])
        return F.embedding(ids.long().clamp(0, table.shape[0] - 1), table)

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
