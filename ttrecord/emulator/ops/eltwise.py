"""Element-wise ops: binary (tensor or scalar operand), unary, typecast.

bfloat16 inputs are computed by torch's bfloat16 CPU kernels, which compute
each element in float32 and round once, as the hardware's FPU result is rounded
when packed to a bfloat16 output.
"""

from __future__ import annotations

from typing import Any, Callable, Optional

import torch
import torch.nn.functional as F

from ..decorators import operation
from ..tensor import Tensor
from ..types import DataType, MemoryConfig
from ._dispatch import as_float, run


def _binary(name: str, torch_fn: Callable[[torch.Tensor, Any], torch.Tensor]):
    def op(
        input_tensor_a: Tensor,
        input_tensor_b: Any,
        *,
        memory_config: Optional[MemoryConfig] = None,
        dtype: Optional[DataType] = None,
        output_tensor: Optional[Tensor] = None,
        activations: Any = None,
        **_: Any,
    ) -> Tensor:
        if isinstance(input_tensor_b, Tensor):
            def fn(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
                if a.dtype != b.dtype:
                    a, b = as_float(a), as_float(b)
                return torch_fn(a, b)

            inputs = [input_tensor_a, input_tensor_b]
        else:
            scalar = float(input_tensor_b)  # baked into the op (and into a trace)

            def fn(a: torch.Tensor) -> torch.Tensor:
                return torch_fn(a if a.is_floating_point() else a.float(), scalar)

            inputs = [input_tensor_a]
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


def _unary(name: str, torch_fn: Callable[[torch.Tensor], torch.Tensor]):
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
