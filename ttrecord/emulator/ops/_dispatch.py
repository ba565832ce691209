"""Running one op: read inputs from device memory, compute on the host CPU,
allocate and write the output, record the op when a trace is being captured.

Compute functions receive and return torch tensors and must not refer to any
`Tensor` (only to plain values such as scalars and shapes): trace records keep
them, and a reference to a tensor would keep its buffer alive.
"""

from __future__ import annotations

from typing import Any, Callable, Optional, Sequence

import torch

from .. import trace as _trace
from ..codec import TensorSpec, to_storage
from ..tensor import Tensor, new_device_tensor, write_values
from ..types import DataType, Layout, MemoryConfig, Shape


def _fatal(message: str) -> RuntimeError:
    return RuntimeError(f"TT_FATAL @ ttnn/cpp/ttnn/operations/op.cpp:0: valid_inputs\ninfo:\n{message}")


def run(
    name: str,
    inputs: Sequence[Tensor],
    fn: Callable[..., torch.Tensor],
    *,
    dtype: Optional[DataType] = None,
    layout: Optional[Layout] = None,
    memory_config: Optional[MemoryConfig] = None,
    output_tensor: Optional[Tensor] = None,
    temporary: bool = False,
    after_output: Optional[Callable[[Any], None]] = None,
    host_ok: bool = False,
) -> Tensor:
    """Run op `name` = fn(*values of inputs); the output spec defaults to input 0's.

    `temporary`: the op allocates a scratch buffer shaped like input 0 before its
    output, writes it, and frees it before returning (as ttnn's reductions do);
    a trace then writes that freed address on every replay. `after_output` runs
    right after the output is allocated (for op-owned buffers that outlive the call).
    `host_ok`: the op also runs on host tensors (layout conversion, reshape), as in
    ttnn; other ops need device tensors.
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
        result = fn(*[t._values() for t in inputs])
        spec = TensorSpec(Shape.of(result.shape), out_dtype, out_layout, None)
        return Tensor.on_host(spec, to_storage(result, out_dtype).contiguous())
    for t in inputs[1:]:
        if t.device() is not device:
            raise _fatal(f"{name}: operands need to be on the same device")
    with device.lock:
        values = [t._values() for t in inputs]
        scratch = new_device_tensor(device, first.spec) if temporary else None
        result = fn(*values)
        if output_tensor is not None:
            out = output_tensor
            if tuple(out.shape) != tuple(result.shape):
                raise _fatal(
                    f"{name}: output_tensor shape {list(out.shape)} does not match the result shape "
                    f"{list(result.shape)}"
                )
        else:
            spec = TensorSpec(
                Shape.of(result.shape), out_dtype, out_layout, memory_config or first.spec.memory_config
            )
            out = new_device_tensor(device, spec)
        if after_output is not None:
            after_output(device)
        write_values(out, result)
        if scratch is None:
            if device.capturing:
                _trace.record_op(device, name, fn, list(inputs), [out])
            return out
        write_values(scratch, values[0])
        if device.capturing:
            _trace.record_op(device, name, _with_scratch(fn), list(inputs), [scratch, out])
        scratch._release()
    return out


def _with_scratch(fn: Callable[..., torch.Tensor]) -> Callable[..., tuple]:
    """The replayed form of an op with a scratch buffer: it writes the scratch, then the output."""

    def replay(*values: torch.Tensor) -> tuple:
        return values[0], fn(*values)

    return replay


def as_float(values: torch.Tensor) -> torch.Tensor:
    """Compute in float32 (the hardware accumulates in fp32); integers stay integers."""
    if values.dtype in (torch.bfloat16, torch.float16):
        return values.float()
    return values
