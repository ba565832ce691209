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
) -> Tensor:
    """Run op `name` = fn(*values of inputs); the output spec defaults to input 0's."""
    for t in inputs:
        if not isinstance(t, Tensor):
            raise TypeError(f"{name}: expected ttnn.Tensor, got {type(t).__name__}")
    first = inputs[0]
    device = first.device()
    out_dtype = dtype if dtype is not None else first.dtype
    out_layout = layout if layout is not None else first.layout
    if device is None:
        # Host tensors: ttnn runs such ops on the host; nothing reaches a device or a trace.
        if any(t.device() is not None for t in inputs):
            raise _fatal(f"{name}: operands must all be on device or all on host")
        result = fn(*[t._values() for t in inputs])
        spec = TensorSpec(Shape.of(result.shape), out_dtype, out_layout, None)
        return Tensor.on_host(spec, to_storage(result, out_dtype).contiguous())
    for t in inputs[1:]:
        if t.device() is not device:
            raise _fatal(f"{name}: operands need to be on the same device")
    with device.lock:
        result = fn(*[t._values() for t in inputs])
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
        write_values(out, result)
        if device.capturing:
            _trace.record_op(device, name, fn, list(inputs), [out])
    return out


def as_float(values: torch.Tensor) -> torch.Tensor:
    """Compute in float32 (the hardware accumulates in fp32); integers stay integers."""
    if values.dtype in (torch.bfloat16, torch.float16):
        return values.float()
    return values
