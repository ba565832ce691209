"""Normalization ops: softmax, rms_norm, layer_norm."""

from __future__ import annotations

from typing import Any, Optional

import torch
import torch.nn.functional as F

from ..decorators import FastOperation, operation
from ..tensor import Tensor
from ..types import MemoryConfig
from ._dispatch import as_float, run


@operation("ttnn.softmax")
def softmax(
    input_tensor: Tensor,
    dim: int = -1,
    *,
    memory_config: Optional[MemoryConfig] = None,
    compute_kernel_config: Any = None,
    numeric_stable: bool = True,
    **_: Any,
) -> Tensor:
    """Softmax along `dim`."""

    def fn(a: torch.Tensor) -> torch.Tensor:
        return torch.softmax(as_float(a), dim=dim)

    return run("ttnn.softmax", [input_tensor], fn, memory_config=memory_config)


def _norm(name: str, kind: str) -> FastOperation:
    def op(
        input_tensor: Tensor,
        *,
        epsilon: float = 1e-12,
        weight: Optional[Tensor] = None,
        bias: Optional[Tensor] = None,
        residual_input_tensor: Optional[Tensor] = None,
        memory_config: Optional[MemoryConfig] = None,
        program_config: Any = None,
        compute_kernel_config: Any = None,
        **_: Any,
    ) -> Tensor:
        has = (residual_input_tensor is not None, weight is not None, bias is not None)
        inputs = [input_tensor] + [t for t in (residual_input_tensor, weight, bias) if t is not None]
        eps = float(epsilon)

        def fn(x: torch.Tensor, *rest: torch.Tensor) -> torch.Tensor:
            rest_iter = iter(rest)
            x = as_float(x)
            if has[0]:
                x = x + as_float(next(rest_iter))
            w = as_float(next(rest_iter)).reshape(-1)[: x.shape[-1]] if has[1] else None
            b = as_float(next(rest_iter)).reshape(-1)[: x.shape[-1]] if has[2] else None
            if kind == "rms":
                out = x * torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + eps)
                if w is not None:
                    out = out * w
                if b is not None:
                    out = out + b
                return out
            return F.layer_norm(x, (x.shape[-1],), w, b, eps)

        return run(f"ttnn.{name}", inputs, fn, memory_config=memory_config)

    op.__name__ = name
    op.__doc__ = f"ttnn.{name}: normalise over the last dimension (optional residual, weight, bias)."
    return operation(f"ttnn.{name}")(op)


rms_norm = _norm("rms_norm", "rms")
layer_norm = _norm("layer_norm", "layer")
