"""Shape ops of ttnn 0.81.1 model code calls beyond reshape/slice: `ttnn.view` (the same
buffer under a new shape, no copy, as ttnn), `ttnn.split` / `ttnn.chunk` (one output buffer
per piece, allocated in order), `ttnn.expand`, `ttnn.tril` / `ttnn.triu`, `ttnn.topk`
(values and indices) and `ttnn.cumsum`."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, Optional

import torch

from .. import trace as _trace
from ..codec import TensorSpec
from ..decorators import operation
from ..tensor import Tensor, new_device_tensor, write_values
from ..types import DataType, Layout, MemoryConfig, Shape, TensorMemoryLayout
from ._dispatch import as_float, run, run_multi


def _target(shape: Sequence[int], volume: int) -> tuple[int, ...]:
    dims = [int(d) for d in shape]
    if dims.count(-1) == 1:
        known = math.prod(d for d in dims if d != -1)
        dims[dims.index(-1)] = volume // known if known else 0
    return tuple(dims)


def _view(name: str, input_tensor: Tensor, shape: Sequence[int]) -> Tensor:
    target = _target(shape, input_tensor.logical_volume())
    if math.prod(target) != input_tensor.logical_volume():
        raise RuntimeError(f"TT_FATAL @ ttnn/cpp/ttnn/operations/core/core.cpp:0: new volume == old volume\ninfo:\n"
                           f"{name}: cannot view {list(input_tensor.shape)} as {list(target)}")
    old, layout = tuple(input_tensor.shape), input_tensor.layout
    # ttnn's conditions (its docstring): the last dim does not change; in TILE layout the
    # second-last does not either, unless neither shape pads it (a multiple of 32).
    same_last = bool(old) and bool(target) and old[-1] == target[-1]
    rows_ok = layout != Layout.TILE or (len(old) > 1 and len(target) > 1 and (
        old[-2] == target[-2] or (old[-2] % 32 == 0 and target[-2] % 32 == 0)))
    if not (same_last and rows_ok):
        raise RuntimeError(
            f"TT_FATAL @ ttnn/cpp/ttnn/operations/core/core.cpp:0: view keeps the page layout\ninfo:\n"
            f"{name}: cannot view {list(old)} as {list(target)} in {layout.name} layout: the last dimension "
            "must not change (in TILE layout the second-last neither, unless it is unpadded); use ttnn.reshape")
    spec = input_tensor.spec._replace(shape=Shape(target))
    if input_tensor.device() is None:
        values = input_tensor._host
        reshaped = [v.reshape(target) for v in values] if isinstance(values, list) else values.reshape(target)
        return Tensor.on_host(spec, reshaped)
    out = Tensor.on_device(spec, input_tensor._buffer)  # type: ignore[arg-type]
    out._chip = input_tensor._chip
    return out


@operation("ttnn.view")
def view(input_tensor: Tensor, shape: Sequence[int]) -> Tensor:
    """The same buffer under `shape` (no copy, no allocation; freeing either frees both)."""
    return _view("ttnn.view", input_tensor, shape)


@operation("ttnn.experimental.view")
def experimental_view(input_tensor: Tensor, *shape: Any) -> Tensor:
    """ttnn.view as `view(t, shape)` or `view(t, N, C, H, W)`."""
    dims = shape[0] if len(shape) == 1 else shape
    return _view("ttnn.experimental.view", input_tensor, dims)


experimental_view.function.overloads = (  # type: ignore[attr-defined]
    lambda input_tensor, N, C, H, W: None, lambda input_tensor, shape: None)


def _pieces(name: str, input_tensor: Tensor, split: Callable[[torch.Tensor], tuple],
            memory_config: Optional[MemoryConfig]) -> list[Tensor]:
    if input_tensor.device() is None:
        raise RuntimeError(f"TT_FATAL @ ttnn/cpp/ttnn/operations/op.cpp:0: valid_inputs\ninfo:\n"
                           f"{name}: input tensors must be on device (got a host tensor)")
    memory = memory_config or MemoryConfig(TensorMemoryLayout.INTERLEAVED, input_tensor.memory_config().buffer_type)

    def fn(a: torch.Tensor) -> tuple:
        return tuple(p.contiguous() for p in split(a))

    return run_multi(name, [input_tensor], fn, memory_config=memory)


@operation("ttnn.split")
def split(input_tensor: Tensor, split_size: Any, dim: int = 0, *, memory_config: Optional[MemoryConfig] = None) -> list[Tensor]:
    """Pieces of `split_size` along `dim` (the last may be smaller), or of the listed sizes."""
    size = [int(s) for s in split_size] if isinstance(split_size, (list, tuple)) else int(split_size)
    return _pieces("ttnn.split", input_tensor, lambda a: torch.split(a, size, dim=dim), memory_config)


@operation("ttnn.chunk")
def chunk(input_tensor: Tensor, chunks: int, dim: int) -> list[Tensor]:
    """`chunks` pieces along `dim`, as torch.chunk."""
    count = int(chunks)
    return _pieces("ttnn.chunk", input_tensor, lambda a: torch.chunk(a, count, dim=dim), None)


@operation("ttnn.expand")
def expand(input_tensor: Tensor, output_shape: Sequence[int], *, memory_config: Optional[MemoryConfig] = None) -> Tensor:
    """Size-1 dims repeated to `output_shape` (-1 keeps a dim)."""
    target = tuple(int(d) for d in output_shape)

    def fn(a: torch.Tensor) -> torch.Tensor:
        return a.expand(target).contiguous()

    return run("ttnn.expand", [input_tensor], fn, memory_config=memory_config)


def _triangle(name: str, torch_fn: Callable[..., torch.Tensor]) -> Any:
    def op(input_tensor: Tensor, *, diagonal: int = 0, memory_config: Optional[MemoryConfig] = None) -> Tensor:
        k = int(diagonal)

        def fn(a: torch.Tensor) -> torch.Tensor:
            return torch_fn(a, diagonal=k)

        # Measured on ttnn 0.81.1: an intermediate buffer like the input (bfloat16 for a
        # float32 input) is allocated before the output and freed before returning.
        scratch = input_tensor.spec
        if scratch.dtype == DataType.FLOAT32:
            scratch = scratch._replace(dtype=DataType.BFLOAT16)
        return run(f"ttnn.{name}", [input_tensor], fn, memory_config=memory_config, temporary=scratch)

    op.__name__ = name
    op.__doc__ = f"ttnn.{name}: torch.{name} over the last two dims."
    return operation(f"ttnn.{name}")(op)


tril = _triangle("tril", torch.tril)
triu = _triangle("triu", torch.triu)


@operation("ttnn.cumsum")
def cumsum(input: Tensor, dim: int, *, dtype: Optional[DataType] = None, reverse_order: bool = False,  # noqa: A002
           out: Optional[Tensor] = None, memory_config: Optional[MemoryConfig] = None,
           disable_compensated_sum: bool = False) -> Tensor:
    """Running sum along `dim` (from the end with `reverse_order`)."""
    reverse = bool(reverse_order)

    def fn(a: torch.Tensor) -> torch.Tensor:
        a = as_float(a)
        if reverse:
            return torch.flip(torch.cumsum(torch.flip(a, [dim]), dim), [dim])
        return torch.cumsum(a, dim)

    return run("ttnn.cumsum", [input], fn, dtype=dtype, memory_config=memory_config, output_tensor=out)


@operation("ttnn.topk")
def topk(input_tensor: Tensor, k: int = 32, dim: int = -1, largest: bool = True, sorted: bool = True, *,  # noqa: A002
         memory_config: Optional[MemoryConfig] = None, sub_core_grids: Any = None, indices_tensor: Optional[Tensor] = None,
         output_tensor: Optional[tuple] = None, stable: bool = False) -> tuple[Tensor, Tensor]:
    """The k largest (or smallest) values along `dim` and their indices, two output buffers
    allocated in that order (or the preallocated `output_tensor` pair). Indices are UINT16,
    32-bit when the tile-padded dim exceeds 65536 or the input is float32 (ttnn 0.81.1's
    rule); with `indices_tensor` the labels it holds at the chosen positions are returned."""
    device = input_tensor.device()
    if device is None:
        raise RuntimeError("TT_FATAL @ ttnn/cpp/ttnn/operations/op.cpp:0: valid_inputs\ninfo:\n"
                           "ttnn.topk: input tensors must be on device (got a host tensor)")
    count, axis, big, ordered = int(k), int(dim), bool(largest), bool(sorted)
    padded = -(-int(input_tensor.shape[axis]) // 32) * 32
    wide = padded > 65536 or input_tensor.dtype == DataType.FLOAT32
    if indices_tensor is not None and indices_tensor.dtype in (DataType.UINT32, DataType.INT32):
        wide = True
    index_dtype = DataType.UINT32 if wide else DataType.UINT16
    inputs = [input_tensor] + ([indices_tensor] if indices_tensor is not None else [])

    def fn(a: torch.Tensor, *labels: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        values, indices = torch.topk(as_float(a), count, dim=axis, largest=big, sorted=ordered)
        if labels:
            indices = torch.gather(labels[0].long(), axis, indices)
        return values, indices.to(torch.int32)

    memory = memory_config or MemoryConfig(TensorMemoryLayout.INTERLEAVED, input_tensor.memory_config().buffer_type)
    chips = [input_tensor._chip] if input_tensor._chip is not None else list(range(device.num_chips))
    given = tuple(output_tensor) if output_tensor is not None else (None, None)
    with device.lock:
        device.queues.run_now(0)
        results = [fn(*[t._values(c) for t in inputs]) for c in chips]
        outs = []
        for out, result, dtype in ((given[0], results[0][0], input_tensor.dtype), (given[1], results[0][1], index_dtype)):
            if out is None:
                out = new_device_tensor(device, TensorSpec(Shape.of(result.shape), dtype, input_tensor.layout, memory))
                out._chip = input_tensor._chip
            outs.append(out)
        for c, (values, indices) in zip(chips, results):
            write_values(outs[0], values, c)
            write_values(outs[1], indices, c)
        if device.capturing:
            _trace.record_op(device, "ttnn.topk", fn, inputs, outs,
                             (input_tensor._chip,) if input_tensor._chip is not None else None)
    return outs[0], outs[1]
