"""Running one op: read inputs from device memory, compute on the host CPU,
allocate and write the output, record the op when a trace is being captured.

Compute functions receive and return torch tensors and must not refer to any
`Tensor` (only to plain values such as scalars and shapes): trace records keep
them, and a reference to a tensor would keep its buffer alive.
"""

from __future__ import annotations

from typing import Any, Optional
from collections.abc import Callable, Sequence

import torch

from .. import program_cache as _program_cache
from .. import trace as _trace
from ..codec import TensorSpec, to_storage
from ..tensor import Tensor, new_device_tensor, write_values
from ..types import DataType, Layout, MemoryConfig, Shape, TensorMemoryLayout


_ONE_CHIP = (0,)
_INTERLEAVED = TensorMemoryLayout.INTERLEAVED


def _fatal(message: str) -> RuntimeError:
    return RuntimeError(f"TT_FATAL @ ttnn/cpp/ttnn/operations/op.cpp:0: valid_inputs\ninfo:\n{message}")


def run(
    name: str,
    inputs: Sequence[Tensor],
    fn: Callable[..., Any],  # per chip a torch.Tensor; collective: all chips' list at once
    *,
    dtype: Optional[DataType] = None,
    layout: Optional[Layout] = None,
    memory_config: Optional[MemoryConfig] = None,
    output_tensor: Optional[Tensor] = None,
    temporary: bool | str | tuple | TensorSpec = False,
    after_output: Optional[Callable[[Any], None]] = None,
    host_ok: bool = False,
    collective: bool = False,
    free_first: Sequence[Tensor] = (),
) -> Tensor:
    """Run op `name` = fn(*values of inputs); the output spec defaults to input 0's.

    `temporary`: the op allocates a scratch buffer shaped like input 0 (or, with
    "output", like its output: an unfused activation's intermediate; or with a shape,
    holding the result in that shape: a reduction's keepdim result) before its
    output, writes it, and frees it before returning (as ttnn's reductions do; with a
    TensorSpec, input 0's values held in that spec: a conversion step's intermediate);
    a trace then writes that freed address on every replay. `after_output` runs
    right after the output is allocated (for op-owned buffers that outlive the call).
    `host_ok`: the op also runs on host tensors (layout conversion, reshape), as in
    ttnn; other ops need device tensors. The op runs on every chip of the mesh (each
    chip's values in, that chip's result out) or, for a chip view from
    get_device_tensors, on that chip only; `collective` ops (CCLs) get every chip's
    inputs at once and return every chip's result. `free_first`: inputs the op frees once it
    has read them, before its output is allocated (conv2d's deallocate_activation).
    """
    for t in inputs:
        if not isinstance(t, Tensor):
            raise TypeError(f"{name}: expected ttnn.Tensor, got {type(t).__name__}")
    first = inputs[0]
    device = first.device()
    out_dtype = dtype if dtype is not None else first.dtype
    out_layout = layout if layout is not None else first.layout
    if device is None:
        # Host tensors: a few ttnn ops run on the host; nothing reaches a device or a trace.
        if not host_ok:
            raise _fatal(f"{name}: input tensors must be on device (got a host tensor)")
        if any(t.device() is not None for t in inputs):
            raise _fatal(f"{name}: operands must all be on device or all on host")
        n = max(t.num_chips for t in inputs)
        results = [to_storage(fn(*[t._values(c) for t in inputs]), out_dtype).contiguous() for c in range(n)]
        spec = TensorSpec(Shape.of(results[0].shape), out_dtype, out_layout, None)
        return Tensor.on_host(spec, results if n > 1 else results[0])
    for t in inputs[1:]:
        if t.device() is not device:
            raise _fatal(f"{name}: operands need to be on the same device")
    view: int | None = None  # the one chip of get_device_tensors views, if the inputs are such views
    for t in inputs:
        if t._chip is not None:
            if view is not None and t._chip != view:
                raise _fatal(f"{name}: operands are on different devices of the mesh")
            view = t._chip
    chips = _ONE_CHIP if view is None and len(device.chip_ids) == 1 else (
        (view,) if view is not None else tuple(range(len(device.chip_ids))))
    views = view is not None
    program, _ = _program_cache.program(device, name, inputs, out_dtype, out_layout, memory_config)
    with device.lock:
        device.queues.run_now(0)  # an op runs on CQ 0 after what is pending there
        if chips is _ONE_CHIP and not collective:  # the common case: one chip
            per_chip = [[t._values() for t in inputs]]
            results = [fn(*per_chip[0])]
        else:
            per_chip = [[t._values(c) for t in inputs] for c in chips]
            results = fn(per_chip) if collective else [fn(*values) for values in per_chip]
        words = _program_cache.garbage(device, program)
        if words is not None:  # a replay overwrote this program's binary: it computes garbage
            results = [_program_cache.garbage_like(words, r) for r in results]
        result = results[0]
        scratch = None
        scratch_shape = tuple(result.shape) if temporary == "output" else (
            temporary if isinstance(temporary, tuple) and not isinstance(temporary, TensorSpec) else None)
        if isinstance(temporary, TensorSpec):
            scratch = new_device_tensor(device, temporary)
        elif scratch_shape is not None:
            scratch = new_device_tensor(device, TensorSpec(
                Shape.of(scratch_shape), out_dtype, out_layout,
                memory_config or inherited_memory_config(first, Shape.of(result.shape), out_layout)))
        elif temporary:
            scratch = new_device_tensor(device, first.spec)
        for t in free_first:
            t._release()
        if output_tensor is not None:
            out = output_tensor
            if tuple(out.shape) != tuple(result.shape):
                raise _fatal(
                    f"{name}: output_tensor shape {list(out.shape)} does not match the result shape "
                    f"{list(result.shape)}"
                )
        else:
            out_memory = memory_config or inherited_memory_config(first, Shape.of(result.shape), out_layout)
            spec = TensorSpec(Shape.of(result.shape), out_dtype, out_layout, out_memory)
            out = new_device_tensor(device, spec)
            if views:
                out._chip = chips[0]
        if after_output is not None:
            after_output(device)
        if chips is _ONE_CHIP:
            write_values(out, result)
        else:
            for c, r in zip(chips, results):
                write_values(out, r, c)
        recorded_chips = chips if views else None
        if scratch is None:
            if device.capturing:
                _trace.record_op(device, name, fn, list(inputs), [out], recorded_chips, collective, program)
            return out
        for c, values, r in zip(chips, per_chip, results):
            write_values(scratch, values[0] if scratch_shape is None else r.reshape(scratch_shape), c)
        if device.capturing:
            replay = _with_scratch(fn) if scratch_shape is None else _with_result_scratch(fn, scratch_shape)
            _trace.record_op(device, name, replay, list(inputs), [scratch, out], recorded_chips,
                             program=program)
        scratch._release()
    return out


def inherited_memory_config(first: Tensor, shape: Shape, layout: Layout) -> Optional[MemoryConfig]:
    """The memory config of an output given no `memory_config`: input 0's, as ttnn's ops
    default to. A sharded input's spec carries over while the output has the input's shape
    (tilize and untilize of a sharded activation stay sharded, measured on ttnn 0.81.1) and
    its shard shape still fits the output's layout; another shape gets an interleaved
    output in the same memory."""
    memory = first.spec.memory_config
    if memory is None or memory.memory_layout is _INTERLEAVED:
        return memory
    spec: Any = memory.shard_spec
    same_shape = tuple(shape) == tuple(first.shape)
    fits = spec is None or layout != Layout.TILE or all(d % 32 == 0 for d in spec.shape)
    if same_shape and fits:
        return memory
    return MemoryConfig(TensorMemoryLayout.INTERLEAVED, memory.buffer_type)


def _with_scratch(fn: Callable[..., torch.Tensor]) -> Callable[..., tuple]:
    """The replayed form of an op with a scratch buffer: it writes the scratch, then the output."""

    def replay(*values: torch.Tensor) -> tuple:
        return values[0], fn(*values)

    return replay


def _with_result_scratch(fn: Callable[..., torch.Tensor], shape: tuple) -> Callable[..., tuple]:
    """Replay of an op whose scratch holds its result (in the scratch's shape)."""

    def replay(*values: torch.Tensor) -> tuple:
        out = fn(*values)
        return out.reshape(shape), out

    return replay


def as_float(values: torch.Tensor) -> torch.Tensor:
    """Compute in float32 (the hardware accumulates in fp32); integers stay integers."""
    if values.dtype in (torch.bfloat16, torch.float16):
        return values.float()
    return values


def run_multi(
    name: str,
    inputs: Sequence[Tensor],
    fn: Callable[..., tuple],
    *,
    memory_config: Optional[MemoryConfig] = None,
    dtype: Optional[DataType] = None,
) -> list[Tensor]:
    """Run an op with several outputs (fn returns a tuple): one buffer per output, allocated
    in order, in `memory_config` (or input 0's buffer type, interleaved)."""
    first = inputs[0]
    device = first.device()
    if device is None:
        raise _fatal(f"{name}: input tensors must be on device (got a host tensor)")
    chips = tuple(range(device.num_chips))
    out_memory = memory_config or MemoryConfig(TensorMemoryLayout.INTERLEAVED, first.memory_config().buffer_type)
    with device.lock:
        device.queues.run_now(0)
        results = [fn(*[t._values(c) for t in inputs]) for c in chips]
        outs = [
            new_device_tensor(device, TensorSpec(Shape.of(r.shape), dtype or first.dtype, first.layout, out_memory))
            for r in results[0]
        ]
        for c, per_chip in zip(chips, results):
            for out, r in zip(outs, per_chip):
                write_values(out, r, c)
        if device.capturing:
            _trace.record_op(device, name, fn, list(inputs), outs)
    return outs
