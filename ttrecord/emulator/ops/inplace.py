"""In-place and division forms of the element-wise ops models call: `ttnn.add_`, `sub_`,
`mul_` and the other `<op>_` binaries of ttnn 0.81.1 (the result is written into input A,
which keeps its layout, memory config and dtype, and is returned), `ttnn.div` (with
`rounding_mode`), and `ttnn.softmax_in_place`."""

from __future__ import annotations

from typing import Any, Optional
from collections.abc import Callable

import torch
import torch.nn.functional as F

from ..decorators import FastOperation, operation
from ..tensor import Tensor
from ..types import DataType, MemoryConfig
from ._dispatch import as_float, run
from .eltwise import _chain


def _as_a(fn: Callable[[torch.Tensor, Any], torch.Tensor]) -> Callable[[torch.Tensor, Any], torch.Tensor]:
    """Comparison results as numbers in A's dtype (ttnn has no boolean dtype)."""
    return lambda a, b: fn(a, b).to(a.dtype if a.is_floating_point() else torch.float32)


_IN_PLACE: dict[str, Callable[[torch.Tensor, Any], torch.Tensor]] = {
    "add_": torch.add,
    "sub_": torch.sub,
    "subtract_": torch.sub,
    "mul_": torch.mul,
    "multiply_": torch.mul,
    "div_": torch.div,
    "divide_": torch.div,
    "rsub_": lambda a, b: torch.sub(b, a),
    "squared_difference_": lambda a, b: torch.square(a - b),
    "eq_": _as_a(torch.eq),
    "ne_": _as_a(torch.ne),
    "gt_": _as_a(torch.gt),
    "ge_": _as_a(torch.ge),
    "lt_": _as_a(torch.lt),
    "le_": _as_a(torch.le),
    "logical_and_": _as_a(lambda a, b: torch.logical_and(a != 0, torch.as_tensor(b) != 0)),
    "logical_or_": _as_a(lambda a, b: torch.logical_or(a != 0, torch.as_tensor(b) != 0)),
    "logical_xor_": _as_a(lambda a, b: torch.logical_xor(a != 0, torch.as_tensor(b) != 0)),
    "ldexp_": lambda a, b: a * torch.pow(2.0, torch.as_tensor(b, dtype=torch.float32)),
    "logaddexp_": lambda a, b: torch.logaddexp(a, torch.as_tensor(b, dtype=a.dtype)),
    "logaddexp2_": lambda a, b: torch.logaddexp2(a, torch.as_tensor(b, dtype=a.dtype)),
    "bias_gelu_": lambda a, b: F.gelu(a + b),
}


def _in_place_run(name: str, torch_fn: Callable[[torch.Tensor, Any], torch.Tensor], input_tensor_a: Tensor,
                  input_tensor_b: Any, activations: Any, a_activations: Any, b_activations: Any) -> Tensor:
    pre_a, pre_b, post = _chain(a_activations), _chain(b_activations), _chain(activations)
    fn: Callable[..., torch.Tensor]
    if isinstance(input_tensor_b, Tensor):
        inputs = [input_tensor_a, input_tensor_b]

        def fn(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
            return post(torch_fn(pre_a(as_float(a)), pre_b(as_float(b))))
    else:
        inputs = [input_tensor_a]
        scalar = float(input_tensor_b)  # baked into the op (and into a trace)

        def fn(a: torch.Tensor) -> torch.Tensor:
            return post(torch_fn(pre_a(as_float(a) if a.is_floating_point() else a.float()), scalar))

    return run(f"ttnn.{name}", inputs, fn, output_tensor=input_tensor_a)


# ttnn 0.81.1 names the operands input_tensor_a/input_tensor_b for these, input_a/input_b for the rest.
_TENSOR_NAMED = ("add_", "sub_", "subtract_")


def _in_place(name: str, torch_fn: Callable[[torch.Tensor, Any], torch.Tensor]) -> FastOperation:
    op: Callable[..., Tensor]
    if name in _TENSOR_NAMED:

        def op(input_tensor_a: Tensor, input_tensor_b: Any, *, activations: Any = None,
               input_tensor_a_activations: Any = None, input_tensor_b_activations: Any = None,
               fast_and_approximate_mode: Optional[bool] = None, sub_core_grids: Any = None,
               sub_device_id: Any = None) -> Tensor:
            return _in_place_run(name, torch_fn, input_tensor_a, input_tensor_b, activations,
                                 input_tensor_a_activations, input_tensor_b_activations)
    else:

        def op(input_a: Tensor, input_b: Any, *, activations: Any = None,
               input_tensor_a_activations: Any = None, input_tensor_b_activations: Any = None,
               fast_and_approximate_mode: Optional[bool] = None, sub_core_grids: Any = None,
               sub_device_id: Any = None) -> Tensor:
            return _in_place_run(name, torch_fn, input_a, input_b, activations,
                                 input_tensor_a_activations, input_tensor_b_activations)

    op.__name__ = name
    op.__doc__ = f"ttnn.{name}(a, b): element-wise into `a` (b a tensor that broadcasts to a, or a number)."
    return operation(f"ttnn.{name}")(op)


IN_PLACE = {name: _in_place(name, fn) for name, fn in _IN_PLACE.items()}


@operation("ttnn.logical_not_")
def logical_not_(input_tensor: Tensor, *, memory_config: Optional[MemoryConfig] = None) -> Tensor:
    """1 where the input is 0, else 0, written over the input."""

    def fn(a: torch.Tensor) -> torch.Tensor:
        return (a == 0).to(a.dtype if a.is_floating_point() else torch.float32)

    return run("ttnn.logical_not_", [input_tensor], fn, output_tensor=input_tensor)


@operation("ttnn.div")
def div(
    input_tensor_a: Any,
    input_tensor_b: Any = None,
    *,
    value: Any = None,
    fast_and_approximate_mode: bool = False,
    rounding_mode: Optional[str] = None,
    dtype: Optional[DataType] = None,
    memory_config: Optional[MemoryConfig] = None,
    output_tensor: Optional[Tensor] = None,
    activations: Any = None,
    input_tensor_a_activations: Any = None,
    input_tensor_b_activations: Any = None,
    sub_core_grids: Any = None,
    sub_device_id: Any = None,
) -> Tensor:
    """a / b with `rounding_mode` None, "floor" or "trunc"; either operand may be a number.
    Integer inputs divided without rounding give float32, as in ttnn 0.81.1."""
    if input_tensor_b is None:
        input_tensor_b = value
    if rounding_mode not in (None, "floor", "trunc"):
        raise RuntimeError(
            "TT_FATAL @ ttnn/cpp/ttnn/operations/eltwise/binary/binary.cpp:0: "
            "rounding_mode == std::nullopt || rounding_mode == \"floor\" || rounding_mode == \"trunc\"\n"
            f"info:\nIncorrect rounding mode (expected None, 'trunc', or 'floor'), got {rounding_mode!r}"
        )
    pre_a, pre_b, post = _chain(input_tensor_a_activations), _chain(input_tensor_b_activations), _chain(activations)
    mode = rounding_mode

    def divide(a: Any, b: Any) -> torch.Tensor:
        return post(torch.div(a, b, rounding_mode=mode))

    if isinstance(input_tensor_a, Tensor) and isinstance(input_tensor_b, Tensor):
        tensor, inputs = input_tensor_a, [input_tensor_a, input_tensor_b]

        def fn(*values: torch.Tensor) -> torch.Tensor:
            return divide(pre_a(as_float(values[0]).float()), pre_b(as_float(values[1]).float()))
    elif isinstance(input_tensor_a, Tensor):
        tensor, inputs, scalar = input_tensor_a, [input_tensor_a], float(input_tensor_b)

        def fn(*values: torch.Tensor) -> torch.Tensor:
            return divide(pre_a(values[0].float()), scalar)
    elif isinstance(input_tensor_b, Tensor):
        tensor, inputs, scalar = input_tensor_b, [input_tensor_b], float(input_tensor_a)

        def fn(*values: torch.Tensor) -> torch.Tensor:
            return divide(scalar, pre_b(values[0].float()))
    else:
        raise TypeError("ttnn.div: at least one of the two operands must be a ttnn.Tensor")
    integer = tensor.dtype in (DataType.INT32, DataType.UINT32, DataType.UINT16, DataType.UINT8)
    if dtype is None and integer and mode is None:
        dtype = DataType.FLOAT32
    # Measured on ttnn 0.81.1: with a rounding mode the quotient is an intermediate buffer
    # (allocated before the output, freed before returning).
    return run("ttnn.div", inputs, fn, dtype=dtype, memory_config=memory_config, output_tensor=output_tensor,
               temporary=mode is not None)


@operation("ttnn.softmax_in_place")
def softmax_in_place(
    input_tensor: Tensor,
    dim: int = -1,
    *,
    program_config: Any = None,
    compute_kernel_config: Any = None,
    numeric_stable: bool = True,
) -> Tensor:
    """Softmax along `dim`, written over the input; returns the input tensor."""

    def fn(a: torch.Tensor) -> torch.Tensor:
        return torch.softmax(as_float(a).float(), dim=dim)

    return run("ttnn.softmax_in_place", [input_tensor], fn, output_tensor=input_tensor)
