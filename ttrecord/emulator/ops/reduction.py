"""Reductions: argmax, sum, mean (sum/mean/max allocate a scratch buffer inside the call)."""

from __future__ import annotations

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


def _reduce_scaler(device: Any) -> None:
    """Measured on ttnn 0.81.1: the first reduction on a device leaves a 512 B/bank
    DRAM buffer alive (owned by the op, right after the first output)."""
    if "reduce_scaler" not in device.op_owned:
        device.op_owned["reduce_scaler"] = device.allocate_buffer(BufferType.DRAM, 1, 512)


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
            temporary=True,
            after_output=_reduce_scaler,
        )

    op.__name__ = name
    op.__doc__ = f"ttnn.{name}(input_tensor, dim=None, keepdim=False)."
    return operation(f"ttnn.{name}")(op)


sum = _reduce("sum", torch.sum)  # noqa: A001 - ttnn's name
mean = _reduce("mean", torch.mean)
max = _reduce("max", lambda a, **kw: torch.amax(a, **kw) if kw else torch.amax(a))  # noqa: A001
