"""More element-wise ops of ttnn 0.81.1 model code calls: unary activations and roundings
(`leaky_relu`, `relu6`, `hardswish`, `mish`, `erf`, `floor`, `round`, `softplus`, `elu`, …),
`clip`, `fill`, the logical ops and the ternary `lerp` / `addcmul` / `addcdiv`. Values are
torch's, in float32 for bfloat16 inputs (one rounding when the result is stored); the
output has input A's dtype, layout and memory config unless `memory_config` says otherwise."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Optional

import torch
import torch.nn.functional as F

from ..decorators import FastOperation, operation
from ..tensor import Tensor
from ..types import DataType, MemoryConfig
from ._dispatch import as_float, run


def _f(a: torch.Tensor) -> torch.Tensor:
    return a.float() if not a.is_floating_point() else as_float(a)


def _mask(a: torch.Tensor, m: torch.Tensor) -> torch.Tensor:
    """A boolean result as 1/0 in the input's dtype (ttnn has no boolean dtype)."""
    return m.to(a.dtype if a.is_floating_point() else torch.float32)


def _unary(name: str, make: Callable[..., Callable[[torch.Tensor], torch.Tensor]],
           params: tuple[tuple[str, Any], ...] = ()) -> FastOperation:
    """An op `name(input_tensor, *, <params>, memory_config, output_tensor, sub_core_grids)`;
    `make(**params)` gives the torch function (the parameters are baked into a trace)."""
    defaults = dict(params)

    def op(input_tensor: Tensor, *args: Any, memory_config: Optional[MemoryConfig] = None,
           output_tensor: Optional[Tensor] = None, sub_core_grids: Any = None,
           fast_and_approximate_mode: bool = False, **kwargs: Any) -> Tensor:
        values = dict(defaults)
        values.update(zip(defaults, args))
        unknown = set(kwargs) - set(defaults)
        if unknown or len(args) > len(defaults):
            raise TypeError(f"{name}(): unexpected arguments {sorted(unknown) or list(args[len(defaults):])}")
        values.update(kwargs)
        fn = make(**values)
        return run(f"ttnn.{name}", [input_tensor], fn, memory_config=memory_config, output_tensor=output_tensor)

    op.__name__ = name
    op.__doc__ = f"ttnn.{name}(input_tensor{''.join(', ' + p for p in defaults)}): element-wise."
    op.overloads = (_signature(params),)  # type: ignore[attr-defined]
    return operation(f"ttnn.{name}")(op)


def _signature(params: tuple[tuple[str, Any], ...]) -> Any:
    import inspect

    P = inspect.Parameter
    fixed = [P("input_tensor", P.POSITIONAL_OR_KEYWORD)]
    fixed += [P(n, P.POSITIONAL_OR_KEYWORD if d is _REQUIRED else P.KEYWORD_ONLY,
                default=P.empty if d is _REQUIRED else d) for n, d in params]
    fixed += [P(n, P.KEYWORD_ONLY, default=None) for n in
              ("memory_config", "output_tensor", "sub_core_grids", "fast_and_approximate_mode")]
    return inspect.Signature(fixed)


_REQUIRED = object()  # a parameter ttnn takes positionally, without a default

leaky_relu = _unary("leaky_relu", lambda negative_slope: lambda a: F.leaky_relu(_f(a), float(negative_slope)),
                    (("negative_slope", _REQUIRED),))
relu6 = _unary("relu6", lambda: lambda a: F.relu6(_f(a)))
hardswish = _unary("hardswish", lambda: lambda a: F.hardswish(_f(a)))
hardsigmoid = _unary("hardsigmoid", lambda: lambda a: F.hardsigmoid(_f(a)))
mish = _unary("mish", lambda: lambda a: F.mish(_f(a)))
swish = _unary("swish", lambda: lambda a: F.silu(_f(a)))
softsign = _unary("softsign", lambda: lambda a: F.softsign(_f(a)))
erf = _unary("erf", lambda: lambda a: torch.erf(_f(a)))
erfinv = _unary("erfinv", lambda: lambda a: torch.erfinv(_f(a)))
expm1 = _unary("expm1", lambda: lambda a: torch.expm1(_f(a)))
log1p = _unary("log1p", lambda: lambda a: torch.log1p(_f(a)))
sinh = _unary("sinh", lambda: lambda a: torch.sinh(_f(a)))
cosh = _unary("cosh", lambda: lambda a: torch.cosh(_f(a)))
tan = _unary("tan", lambda: lambda a: torch.tan(_f(a)))
atan = _unary("atan", lambda: lambda a: torch.atan(_f(a)))
floor = _unary("floor", lambda: lambda a: torch.floor(_f(a)))
ceil = _unary("ceil", lambda: lambda a: torch.ceil(_f(a)))
sign = _unary("sign", lambda: lambda a: torch.sign(_f(a)))
identity = _unary("identity", lambda: lambda a: a)
isfinite = _unary("isfinite", lambda: lambda a: _mask(a, torch.isfinite(a)))
logical_not = _unary("logical_not", lambda: lambda a: _mask(a, a == 0))
round = _unary("round", lambda decimals: lambda a: torch.round(_f(a), decimals=int(decimals)),  # noqa: A001
               (("decimals", 0),))
softplus = _unary("softplus", lambda beta, threshold: lambda a: F.softplus(_f(a), float(beta), float(threshold)),
                  (("beta", 1.0), ("threshold", 20.0)))
elu = _unary("elu", lambda alpha: lambda a: F.elu(_f(a), float(alpha)), (("alpha", 1.0),))
celu = _unary("celu", lambda alpha: lambda a: F.celu(_f(a), float(alpha)), (("alpha", 1.0),))
selu = _unary("selu", lambda scale, alpha: lambda a: float(scale) * torch.where(
    _f(a) > 0, _f(a), float(alpha) * torch.expm1(_f(a))), (("scale", 1.0507009873554805), ("alpha", 1.6732632423543772)))
hardtanh = _unary("hardtanh", lambda min_val, max_val: lambda a: F.hardtanh(_f(a), float(min_val), float(max_val)),
                  (("min_val", -1.0), ("max_val", 1.0)))
logit = _unary("logit", lambda eps: lambda a: torch.logit(_f(a), eps=None if eps is None else float(eps)),
               (("eps", None),))


@operation("ttnn.clip")
def clip(input_tensor: Tensor, min: Optional[float] = None, max: Optional[float] = None, *,  # noqa: A002
         memory_config: Optional[MemoryConfig] = None) -> Tensor:
    """Values limited to [min, max] (either may be None), as ttnn.clamp."""
    low, high = min, max

    def fn(a: torch.Tensor) -> torch.Tensor:
        return torch.clamp(_f(a), low, high)

    return run("ttnn.clip", [input_tensor], fn, memory_config=memory_config)


@operation("ttnn.fill")
def fill(input_tensor: Tensor, fill_value: float, *, memory_config: Optional[MemoryConfig] = None,
         output_tensor: Optional[Tensor] = None, sub_core_grids: Any = None) -> Tensor:
    """A tensor like the input with every value `fill_value` (computed on device: no write)."""
    value = float(fill_value)

    def fn(a: torch.Tensor) -> torch.Tensor:
        return torch.full(a.shape, value)

    return run("ttnn.fill", [input_tensor], fn, memory_config=memory_config, output_tensor=output_tensor)


def _logical(name: str, torch_fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor]) -> FastOperation:
    def op(input_tensor_a: Tensor, input_tensor_b: Any, *, dtype: Optional[DataType] = None,
           memory_config: Optional[MemoryConfig] = None, output_tensor: Optional[Tensor] = None,
           activations: Any = None, input_tensor_a_activations: Any = None, input_tensor_b_activations: Any = None,
           sub_core_grids: Any = None, sub_device_id: Any = None) -> Tensor:
        if isinstance(input_tensor_b, Tensor):
            def fn(*values: torch.Tensor) -> torch.Tensor:
                return _mask(values[0], torch_fn(values[0] != 0, values[1] != 0))

            inputs = [input_tensor_a, input_tensor_b]
        else:
            other = float(input_tensor_b) != 0

            def fn(*values: torch.Tensor) -> torch.Tensor:
                return _mask(values[0], torch_fn(values[0] != 0, torch.tensor(other)))

            inputs = [input_tensor_a]
        return run(f"ttnn.{name}", inputs, fn, dtype=dtype, memory_config=memory_config, output_tensor=output_tensor)

    op.__name__ = name
    op.__doc__ = f"ttnn.{name}(a, b): 1 where the element-wise {name.split('_')[1]} of a != 0 and b != 0 holds, else 0."
    return operation(f"ttnn.{name}")(op)


logical_and = _logical("logical_and", torch.logical_and)
logical_or = _logical("logical_or", torch.logical_or)
logical_xor = _logical("logical_xor", torch.logical_xor)


@operation("ttnn.lerp")
def lerp(input: Tensor, end: Tensor, weight: Any, *, memory_config: Optional[MemoryConfig] = None,  # noqa: A002
         output_tensor: Optional[Tensor] = None) -> Tensor:
    """input + weight × (end − input); `weight` a tensor or a number."""
    if isinstance(weight, Tensor):
        def fn(*v: torch.Tensor) -> torch.Tensor:
            return torch.lerp(_f(v[0]), _f(v[1]), _f(v[2]))

        inputs = [input, end, weight]
    else:
        w = float(weight)

        def fn(*v: torch.Tensor) -> torch.Tensor:
            return torch.lerp(_f(v[0]), _f(v[1]), w)

        inputs = [input, end]
    return run("ttnn.lerp", inputs, fn, memory_config=memory_config, output_tensor=output_tensor)


def _ternary(name: str, torch_fn: Callable[..., torch.Tensor]) -> FastOperation:
    def op(input_a: Tensor, input_b: Tensor, input_c: Tensor, *, value: float = 1.0,
           memory_config: Optional[MemoryConfig] = None, output_tensor: Optional[Tensor] = None) -> Tensor:
        scale = float(value)

        def fn(a: torch.Tensor, b: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
            return torch_fn(_f(a), _f(b), _f(c), value=scale)

        return run(f"ttnn.{name}", [input_a, input_b, input_c], fn, memory_config=memory_config,
                   output_tensor=output_tensor)

    op.__name__ = name
    op.__doc__ = f"ttnn.{name}(a, b, c, value=1): torch.{name} on device."
    return operation(f"ttnn.{name}")(op)


addcmul = _ternary("addcmul", torch.addcmul)
addcdiv = _ternary("addcdiv", torch.addcdiv)
