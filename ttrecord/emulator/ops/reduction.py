"""Reductions: argmax, sum, mean (sum/mean/max allocate a scratch buffer inside the call)."""

from __future__ import annotations

import builtins

from collections.abc import Callable
from typing import Any, Optional

import torch

from ..decorators import FastOperation, operation
from ..tensor import Tensor
from ..types import BufferType, DataType, Layout, MemoryConfig
from ._dispatch import as_float, run


@operation("ttnn.argmax")
def argmax(
    input_tensor: Tensor,
    *,
    dim: Optional[int] = None,
    keepdim: bool = False,
    memory_config: Optional[MemoryConfig] = None,
    output_tensor: Optional[Tensor] = None,
    use_multicore: bool = False,
    **_: Any,
) -> Tensor:
    """Index of the maximum (UINT32, ROW_MAJOR output as in ttnn)."""

    def fn(a: torch.Tensor) -> torch.Tensor:
        out = torch.argmax(as_float(a), dim=dim, keepdim=keepdim) if dim is not None else torch.argmax(as_float(a))
        return out.reshape(1) if out.dim() == 0 else out

    return run(
        "ttnn.argmax",
        [input_tensor],
        fn,
        dtype=DataType.UINT32,
        layout=Layout.ROW_MAJOR,
        memory_config=memory_config,
        output_tensor=output_tensor,
    )


def _reduce_scaler(key: tuple, width: int) -> Callable[[Any], None]:
    """Measured on ttnn 0.81.1: the first keepdim=False reduction of each input shape leaves
    a DRAM buffer alive (right after the output; sum and mean of one shape share it): one
    512-byte page per 32 columns of the output."""

    def allocate(device: Any) -> None:
        if key not in device.op_owned:
            device.op_owned[key] = device.allocate_buffer(BufferType.DRAM, builtins.max(1, -(-width // 32)), 512)

    return allocate


def _out_width(shape: Any, dims: Any) -> int:
    """The last dimension of a keepdim=False reduction's output."""
    if dims is None:
        return 1
    out = torch.empty(tuple(shape), device="meta").sum(dim=dims).shape
    return int(out[-1]) if len(out) else 1


def _reduce(name: str, torch_fn: Callable[..., torch.Tensor]) -> FastOperation:
    def op(
        input_tensor: Tensor,
        dim: Any = None,
        keepdim: bool = False,
        *,
        memory_config: Optional[MemoryConfig] = None,
        compute_kernel_config: Any = None,
        scalar: float = 1.0,
        **_: Any,
    ) -> Tensor:
        dims = dim
        kept: Any = True
        if not keepdim:  # the intermediate: the result with the reduced dims kept
            kept = tuple(torch.empty(tuple(input_tensor.shape), device="meta").sum(
                dim=dims, keepdim=True).shape) if dims is not None else (1,) * max(len(input_tensor.shape), 1)

        def fn(a: torch.Tensor) -> torch.Tensor:
            a = as_float(a)
            out = torch_fn(a) if dims is None else torch_fn(a, dim=dims, keepdim=keepdim)
            out = out * scalar if scalar != 1.0 else out
            return out.reshape(1) if out.dim() == 0 else out

        return run(
            f"ttnn.{name}",
            [input_tensor],
            fn,
            memory_config=memory_config,
            # keepdim=False reduces into an intermediate, then drops the dim; keepdim=True
            # writes the output directly (ttnn 0.81.1, measured)
            temporary=False if keepdim else kept,
            after_output=None if keepdim else _reduce_scaler(
                ("reduce_scaler", tuple(input_tensor.shape), str(dims)), _out_width(input_tensor.shape, dims)),
        )

    op.__name__ = name
    op.__doc__ = f"ttnn.{name}(input_tensor, dim=None, keepdim=False)."
    return operation(f"ttnn.{name}")(op)


sum = _reduce("sum", torch.sum)  # noqa: A001 - ttnn's name
mean = _reduce("mean", torch.mean)
max = _reduce("max", lambda a, **kw: torch.amax(a, **kw) if kw else torch.amax(a))  # noqa: A001
