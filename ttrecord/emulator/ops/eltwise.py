"""Element-wise ops: binary (tensor or scalar operand), unary, typecast.

bfloat16 inputs are computed by torch's bfloat16 CPU kernels, which compute
each element in float32 and round once, as the hardware's FPU result is rounded
when packed to a bfloat16 output.
"""

from __future__ import annotations

from typing import Any, Optional
from collections.abc import Callable

import torch
import torch.nn.functional as F

from ..decorators import FastOperation, operation
from ..tensor import Tensor
from ..types import DataType, MemoryConfig
from ._dispatch import as_float, run


_UNARY = {"RELU": torch.relu, "GELU": F.gelu, "SILU": F.silu, "SIGMOID": torch.sigmoid, "TANH": torch.tanh,
          "IDENTITY": lambda x: x}


class _Chain:
    """Activations applied in order (ttnn.UnaryOpType members, UnaryWithParam, or names);
    falsy when there are none."""

    def __init__(self, steps: list) -> None:
        self.steps = steps

    def __bool__(self) -> bool:
        return bool(self.steps)

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        for step in self.steps:
            x = step(x.float() if not x.is_floating_point() else x)
        return x


def _chain(activations: Any) -> _Chain:
    steps = []
    for act in activations or ():
        act = getattr(act, "arg0", getattr(act, "op_type", act))  # UnaryWithParam(op, ...)
        name = act.name if hasattr(act, "name") else str(act).split(".")[-1]
        try:
            steps.append(_UNARY[name.upper()])
        except KeyError:
            raise RuntimeError(f"ttnn emulator: activation {name} is not emulated (see docs/emulator.md)") from None
    return _Chain(steps)


def _binary(name: str, torch_fn: Callable[[torch.Tensor, Any], torch.Tensor]) -> FastOperation:
    def op(
        input_tensor_a: Tensor,
        input_tensor_b: Any,
        *,
        memory_config: Optional[MemoryConfig] = None,
        dtype: Optional[DataType] = None,
        output_tensor: Optional[Tensor] = None,
        activations: Any = None,
        input_tensor_a_activations: Any = None,
        input_tensor_b_activations: Any = None,
        **_: Any,
    ) -> Tensor:
        fused = bool(input_tensor_a_activations or input_tensor_b_activations or activations)
        if fused:
            pre_a, pre_b, post = _chain(input_tensor_a_activations), _chain(input_tensor_b_activations), _chain(activations)
        fn: Callable[..., torch.Tensor]
        if isinstance(input_tensor_b, Tensor):
            inputs = [input_tensor_a, input_tensor_b]
            if fused:
                def fn(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
                    return post(torch_fn(pre_a(as_float(a)), pre_b(as_float(b))))
            else:
                def fn(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
                    if a.dtype != b.dtype:
                        a, b = as_float(a), as_float(b)
                    return torch_fn(a, b)
        else:
            inputs = [input_tensor_a]
            scalar = float(input_tensor_b)  # baked into the op (and into a trace)

            def fn(a: torch.Tensor) -> torch.Tensor:
                a = a if a.is_floating_point() else a.float()
                return post(torch_fn(pre_a(a), scalar)) if fused else torch_fn(a, scalar)
        return run(
            f"ttnn.{name}",
            inputs,
            fn,
            dtype=dtype,
            memory_config=memory_config,
            output_tensor=output_tensor,
        )

    op.__name__ = name
    op.__doc__ = f"ttnn.{name}(a, b): element-wise, b a tensor (broadcast) or a Python number."
    return operation(f"ttnn.{name}")(op)


add = _binary("add", torch.add)
subtract = _binary("subtract", torch.sub)
multiply = _binary("multiply", torch.mul)
divide = _binary("divide", torch.div)
maximum = _binary("maximum", lambda a, b: torch.maximum(a, torch.as_tensor(b, dtype=a.dtype)))
minimum = _binary("minimum", lambda a, b: torch.minimum(a, torch.as_tensor(b, dtype=a.dtype)))
eq = _binary("eq", lambda a, b: torch.eq(a, b).to(a.dtype))
ne = _binary("ne", lambda a, b: torch.ne(a, b).to(a.dtype))
gt = _binary("gt", lambda a, b: torch.gt(a, b).to(a.dtype))
lt = _binary("lt", lambda a, b: torch.lt(a, b).to(a.dtype))
ge = _binary("ge", lambda a, b: torch.ge(a, b).to(a.dtype))
le = _binary("le", lambda a, b: torch.le(a, b).to(a.dtype))
sub = subtract
mul = multiply


def _unary(name: str, torch_fn: Callable[[torch.Tensor], torch.Tensor]) -> FastOperation:
    def op(
        input_tensor: Tensor,
        *,
        memory_config: Optional[MemoryConfig] = None,
        output_tensor: Optional[Tensor] = None,
        fast_and_approximate_mode: bool = False,
        **_: Any,
    ) -> Tensor:
        def fn(a: torch.Tensor) -> torch.Tensor:
            return torch_fn(a if a.is_floating_point() else a.float())

        return run(f"ttnn.{name}", [input_tensor], fn, memory_config=memory_config, output_tensor=output_tensor)

    op.__name__ = name
    op.__doc__ = f"ttnn.{name}(input_tensor): element-wise {name}."
    return operation(f"ttnn.{name}")(op)


relu = _unary("relu", torch.relu)
gelu = _unary("gelu", F.gelu)
silu = _unary("silu", F.silu)
exp = _unary("exp", torch.exp)
sqrt = _unary("sqrt", torch.sqrt)
rsqrt = _unary("rsqrt", torch.rsqrt)
neg = _unary("neg", torch.neg)
sigmoid = _unary("sigmoid", torch.sigmoid)
tanh = _unary("tanh", torch.tanh)
abs = _unary("abs", torch.abs)  # noqa: A001 - ttnn's name
cos = _unary("cos", torch.cos)
sin = _unary("sin", torch.sin)
log = _unary("log", torch.log)
square = _unary("square", torch.square)
reciprocal = _unary("reciprocal", torch.reciprocal)
pow = _binary("pow", torch.pow)  # noqa: A001


@operation("ttnn.clamp")
def clamp(input_tensor: Tensor, min: Optional[float] = None, max: Optional[float] = None, *,  # noqa: A002
          memory_config: Optional[MemoryConfig] = None, **_: Any) -> Tensor:
    low, high = min, max

    def fn(a: torch.Tensor) -> torch.Tensor:
        return torch.clamp(a if a.is_floating_point() else a.float(), low, high)

    return run("ttnn.clamp", [input_tensor], fn, memory_config=memory_config)


@operation("ttnn.where")
def where(condition: Tensor, true_value: Any, false_value: Any, *, memory_config: Optional[MemoryConfig] = None, **_: Any) -> Tensor:
    """true_value where condition is non-zero, else false_value (tensors or numbers)."""
    inputs = [condition] + [v for v in (true_value, false_value) if isinstance(v, Tensor)]
    t_const = None if isinstance(true_value, Tensor) else float(true_value)
    f_const = None if isinstance(false_value, Tensor) else float(false_value)

    def fn(c: torch.Tensor, *rest: torch.Tensor) -> torch.Tensor:
        it = iter(rest)
        t = as_float(next(it)) if t_const is None else torch.tensor(t_const)
        f = as_float(next(it)) if f_const is None else torch.tensor(f_const)
        return torch.where(c != 0, t, f)

    return run("ttnn.where", inputs, fn, memory_config=memory_config)


@operation("ttnn.typecast")
def typecast(
    input_tensor: Tensor,
    dtype: DataType,
    *,
    memory_config: Optional[MemoryConfig] = None,
    output_tensor: Optional[Tensor] = None,
    **_: Any,
) -> Tensor:
    """Convert to another data type on device."""

    def fn(a: torch.Tensor) -> torch.Tensor:
        return a.float() if a.is_floating_point() else a

    return run("ttnn.typecast", [input_tensor], fn, dtype=dtype, memory_config=memory_config, output_tensor=output_tensor)
