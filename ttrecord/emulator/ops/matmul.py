"""Matrix multiplication ops: matmul and linear (fp32 accumulation, like the hardware)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Optional

import torch
import torch.nn.functional as F

from ..decorators import operation
from ..tensor import Tensor
from ..types import DRAM_MEMORY_CONFIG, DataType, MemoryConfig
from ._dispatch import as_float, run

_ACTIVATIONS = {None: lambda x: x, "relu": torch.relu, "gelu": F.gelu, "silu": F.silu}


def _activation(name: Optional[str]) -> Callable[[torch.Tensor], torch.Tensor]:
    try:
        return _ACTIVATIONS[name.lower() if isinstance(name, str) else name]
    except KeyError:
        raise RuntimeError(f"ttnn emulator: activation {name!r} is not supported") from None


def _product(transpose_a: bool, transpose_b: bool, activation: Optional[str]) -> Callable[..., torch.Tensor]:
    """The host computation of matmul and linear: a @ b, plus a bias row when one is given."""
    act = _activation(activation)

    def fn(a: torch.Tensor, b: torch.Tensor, *bias: torch.Tensor) -> torch.Tensor:
        a, b = as_float(a), as_float(b)
        if transpose_a:
            a = a.transpose(-1, -2)
        if transpose_b:
            b = b.transpose(-1, -2)
        out = torch.matmul(a, b)
        if bias:
            out = out + as_float(bias[0]).reshape(-1, out.shape[-1])[0]
        return act(out)

    return fn


@operation("ttnn.matmul")
def matmul(
    input_tensor_a: Tensor,
    input_tensor_b: Tensor,
    *,
    transpose_a: bool = False,
    transpose_b: bool = False,
    memory_config: Optional[MemoryConfig] = None,
    dtype: Optional[DataType] = None,
    program_config: Any = None,
    activation: Optional[str] = None,
    compute_kernel_config: Any = None,
    core_grid: Any = None,
    output_tile: Any = None,
    optional_output_tensor: Optional[Tensor] = None,
    **_: Any,
) -> Tensor:
    """a @ b with broadcasting over batch dims; output in DRAM unless memory_config says otherwise."""
    return run(
        "ttnn.matmul",
        [input_tensor_a, input_tensor_b],
        _product(transpose_a, transpose_b, activation),
        dtype=dtype,
        memory_config=memory_config or DRAM_MEMORY_CONFIG,
        output_tensor=optional_output_tensor,
        # without a program config the activation is a separate op after the product: its
        # input is an intermediate the size of the output (ttnn 0.81.1, measured)
        temporary="output" if activation and program_config is None and optional_output_tensor is None else False,
    )


@operation("ttnn.linear")
def linear(
    input_tensor_a: Tensor,
    input_tensor_b: Tensor,
    *,
    bias: Optional[Tensor] = None,
    transpose_a: bool = False,
    transpose_b: bool = False,
    memory_config: Optional[MemoryConfig] = None,
    dtype: Optional[DataType] = None,
    program_config: Any = None,
    activation: Optional[str] = None,
    compute_kernel_config: Any = None,
    core_grid: Any = None,
    output_tile: Any = None,
    optional_output_tensor: Optional[Tensor] = None,
    **_: Any,
) -> Tensor:
    """a @ b (+ bias), b given as (in_features, out_features) as ttnn expects."""
    inputs = [input_tensor_a, input_tensor_b] + ([bias] if bias is not None else [])
    return run(
        "ttnn.linear",
        inputs,
        _product(transpose_a, transpose_b, activation),
        dtype=dtype,
        memory_config=memory_config or DRAM_MEMORY_CONFIG,
        output_tensor=optional_output_tensor,
        # without a program config the activation is a separate op after the product: its
        # input is an intermediate the size of the output (ttnn 0.81.1, measured)
        temporary="output" if activation and program_config is None and optional_output_tensor is None else False,
    )
