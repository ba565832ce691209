"""Layout and shape ops tt-metal's models call: tilize/untilize (with padding), pad,
unsqueeze_to_4D, (un)squeeze, repeat, repeat_interleave, plus_one (in place)."""

from __future__ import annotations

import builtins
import inspect
from typing import Any, Optional
from collections.abc import Sequence

import torch
import torch.nn.functional as F

from ..decorators import operation
from ..tensor import Tensor
from ..sharding import ShardSpec
from ..types import DataType, Layout, MemoryConfig, TensorMemoryLayout
from ._dispatch import run
from .data_movement import view


def _same(a: torch.Tensor) -> torch.Tensor:
    return a


@operation("ttnn.tilize")
def tilize(input_tensor: Tensor, *, memory_config: Optional[MemoryConfig] = None, dtype: Optional[DataType] = None, **_: Any) -> Tensor:
    """ROW_MAJOR → TILE on device (same values)."""
    return run("ttnn.tilize", [input_tensor], _same, dtype=dtype, layout=Layout.TILE, memory_config=memory_config)


@operation("ttnn.untilize")
def untilize(input_tensor: Tensor, *, memory_config: Optional[MemoryConfig] = None, **_: Any) -> Tensor:
    """TILE → ROW_MAJOR on device (same values)."""
    return run("ttnn.untilize", [input_tensor], _same, layout=Layout.ROW_MAJOR, memory_config=memory_config)


@operation("ttnn.tilize_with_val_padding")
def tilize_with_val_padding(
    input_tensor: Tensor,
    output_tensor_shape: Sequence[int],
    pad_value: float,
    *,
    memory_config: Optional[MemoryConfig] = None,
    dtype: Optional[DataType] = None,
    **_: Any,
) -> Tensor:
    """ROW_MAJOR → TILE padded to `output_tensor_shape` with `pad_value`. As in ttnn 0.81.1
    (measured) the padding is physical: the logical shape stays the input's, so the values
    read back are the input's (the emulator does not keep pad values in tile padding)."""
    target = [int(d) for d in output_tensor_shape]
    if any(t < d for t, d in zip(reversed(target), reversed(list(input_tensor.shape)))):
        raise RuntimeError("TT_FATAL: tilize_with_val_padding: output shape must not be smaller than the input")
    return run("ttnn.tilize_with_val_padding", [input_tensor], _same, dtype=dtype, layout=Layout.TILE, memory_config=memory_config)


@operation("ttnn.untilize_with_unpadding")
def untilize_with_unpadding(
    input_tensor: Tensor, output_tensor_end: Sequence[int], *, memory_config: Optional[MemoryConfig] = None, **_: Any
) -> Tensor:
    """TILE → ROW_MAJOR keeping [0, end] (inclusive) of each dim. A height-sharded input
    gives an output height-sharded over the same cores, each shard the output's rows over
    the cores (ttnn 0.81.1, measured)."""
    index = tuple(builtins.slice(0, int(e) + 1) for e in output_tensor_end)
    memory = input_tensor.memory_config()
    spec: Any = memory.shard_spec
    if memory_config is None and memory.memory_layout == TensorMemoryLayout.HEIGHT_SHARDED and spec is not None:
        out_shape = [int(e) + 1 for e in output_tensor_end]
        rows = 1
        for d in out_shape[:-1]:
            rows *= d
        cores = spec.num_cores()
        if rows % cores == 0:
            memory_config = MemoryConfig(TensorMemoryLayout.HEIGHT_SHARDED, memory.buffer_type,
                                         ShardSpec(spec.grid, [rows // cores, out_shape[-1]], spec.orientation))

    def fn(a: torch.Tensor) -> torch.Tensor:
        return a[index].contiguous()

    return run("ttnn.untilize_with_unpadding", [input_tensor], fn, layout=Layout.ROW_MAJOR, memory_config=memory_config)


def _pad_by_padding(
    input_tensor: Tensor, padding: Sequence[Sequence[int]], value: float, *, use_multicore: bool = True,
    memory_config: Optional[MemoryConfig] = None, sub_core_grids: Any = None,
    output_tensor_shape: Optional[Sequence[int]] = None, input_tensor_start: Optional[Sequence[int]] = None,
) -> Any:
    return locals()


def _pad_to_shape(
    input_tensor: Tensor, output_padded_shape: Sequence[int], input_tensor_start: Sequence[int], value: float, *,
    use_multicore: bool = True, memory_config: Optional[MemoryConfig] = None, sub_core_grids: Any = None,
) -> Any:
    return locals()


def _pad_form(args: tuple, kwargs: dict) -> dict:
    """The arguments of the first of ttnn 0.81.1's two pad overloads the call fits, as
    nanobind tries them in order (the padding form needs (before, after) pairs)."""
    try:
        bound = inspect.signature(_pad_by_padding).bind(*args, **kwargs)
        bound.apply_defaults()
        form = dict(bound.arguments)
        if all(isinstance(p, Sequence) and len(p) == 2 for p in form["padding"]):
            return form
    except TypeError:
        pass
    try:
        bound = inspect.signature(_pad_to_shape).bind(*args, **kwargs)
    except TypeError:
        if "output_tensor_shape" in kwargs:  # the emulator's earlier keyword form
            bound = inspect.signature(_pad_by_padding).bind(*args[:1], None, *args[1:], **kwargs)
            bound.apply_defaults()
            return dict(bound.arguments)
        raise TypeError(
            "pad(): incompatible function arguments; ttnn 0.81.1 takes pad(input_tensor, padding, value) or "
            "pad(input_tensor, output_padded_shape, input_tensor_start, value)"
        ) from None
    bound.apply_defaults()
    form = dict(bound.arguments)
    form["output_tensor_shape"] = form.pop("output_padded_shape")
    form["padding"] = None
    return form


@operation("ttnn.pad")
def pad(*args: Any, **kwargs: Any) -> Tensor:
    """Pad with `value`, in ttnn 0.81.1's two forms: `pad(t, padding, value)` with padding
    [(before, after)] per dim (from the first), or `pad(t, output_padded_shape,
    input_tensor_start, value)`."""
    form = _pad_form(args, kwargs)
    input_tensor = form["input_tensor"]
    padding, value, memory_config = form["padding"], form["value"], form["memory_config"]
    output_tensor_shape, input_tensor_start = form["output_tensor_shape"], form["input_tensor_start"]
    fill = float(value)
    if padding is None and output_tensor_shape is not None:
        start = [int(s) for s in (input_tensor_start or [0] * len(output_tensor_shape))]
        padding = [(s, int(o) - s - int(d)) for s, o, d in zip(start, output_tensor_shape, input_tensor.shape)]
    pairs = [tuple(int(v) for v in p) for p in padding]

    def fn(a: torch.Tensor) -> torch.Tensor:
        flat: list[int] = []
        full = [(0, 0)] * (a.dim() - len(pairs)) + pairs
        for before, after in reversed(full):
            flat += [before, after]
        src = a if a.is_floating_point() else a.float()
        return F.pad(src.float(), flat, value=fill).to(a.dtype)

    return run("ttnn.pad", [input_tensor], fn, memory_config=memory_config, host_ok=True)


@operation("ttnn.unsqueeze_to_4D")
def unsqueeze_to_4D(tensor: Tensor) -> Tensor:  # noqa: N802 - ttnn's name
    """Leading dims of 1 up to rank 4."""
    rank = len(tensor.shape)
    if rank > 4:
        raise RuntimeError("TT_FATAL: unsqueeze_to_4D: tensor rank is greater than 4")
    target = (1,) * (4 - rank) + tuple(tensor.shape)
    same = view(tensor, target)
    if same is not None:
        return same

    def fn(a: torch.Tensor) -> torch.Tensor:
        return a.reshape(target)

    return run("ttnn.unsqueeze_to_4D", [tensor], fn, host_ok=True)


@operation("ttnn.unsqueeze")
def unsqueeze(input_tensor: Tensor, dim: int, **_: Any) -> Tensor:
    dims = list(input_tensor.shape)
    dims.insert(dim if dim >= 0 else len(dims) + 1 + dim, 1)
    same = view(input_tensor, dims)
    if same is not None:
        return same

    def fn(a: torch.Tensor) -> torch.Tensor:
        return a.unsqueeze(dim)

    return run("ttnn.unsqueeze", [input_tensor], fn, host_ok=True)


@operation("ttnn.squeeze")
def squeeze(input_tensor: Tensor, dim: Any = None, **_: Any) -> Tensor:
    if input_tensor.device() is not None:
        shape = tuple(torch.empty(tuple(input_tensor.shape), device="meta").squeeze(
            *(() if dim is None else (tuple(dim) if isinstance(dim, (list, tuple)) else (dim,)))).shape)
        same = view(input_tensor, shape)
        if same is not None:
            return same

    def fn(a: torch.Tensor) -> torch.Tensor:
        if dim is None:
            return a.squeeze()
        return a.squeeze(tuple(dim) if isinstance(dim, (list, tuple)) else dim)

    return run("ttnn.squeeze", [input_tensor], fn, host_ok=True)


@operation("ttnn.repeat")
def repeat(input_tensor: Tensor, repetition_vector: Sequence[int], *, memory_config: Optional[MemoryConfig] = None, **_: Any) -> Tensor:
    reps = tuple(int(r) for r in repetition_vector)

    def fn(a: torch.Tensor) -> torch.Tensor:
        return a.repeat(reps)

    return run("ttnn.repeat", [input_tensor], fn, memory_config=memory_config)


@operation("ttnn.repeat_interleave")
def repeat_interleave(input_tensor: Tensor, repeats: int, dim: int, *, memory_config: Optional[MemoryConfig] = None, **_: Any) -> Tensor:
    def fn(a: torch.Tensor) -> torch.Tensor:
        return a.repeat_interleave(int(repeats), dim=dim)

    return run("ttnn.repeat_interleave", [input_tensor], fn, memory_config=memory_config)


@operation("ttnn.plus_one")
def plus_one(input_tensor: Tensor, *, sub_core_grids: Any = None, skip_negative_entries: bool = False, **_: Any) -> Tensor:
    """Adds 1 to every element *in place* (decode position counters); with
    `skip_negative_entries`, negatives and INT32_MAX stay as they are."""
    skip = skip_negative_entries

    def fn(a: torch.Tensor) -> torch.Tensor:
        if not skip:
            return a + 1
        keep = (a < 0) | (a == torch.iinfo(torch.int32).max)
        return torch.where(keep, a, a + 1)

    return run("ttnn.plus_one", [input_tensor], fn, output_tensor=input_tensor)


pad.function.overloads = (_pad_by_padding, _pad_to_shape)  # type: ignore[attr-defined]  # the signatures pad accepts
