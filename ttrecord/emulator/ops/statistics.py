"""`ttnn.min`, `ttnn.std` and `ttnn.var` along given dims (one TILE output in the input's
dtype, no intermediate buffer: measured on ttnn 0.81.1), `ttnn.global_avg_pool2d` and
`ttnn.tilize_with_zero_padding` (an output only). A reduction over every dim (dim=None)
runs a chain of per-dim reductions in ttnn whose buffers the emulator does not model, so
that form raises NotEmulatedError."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Optional, Union

import torch

from ..decorators import FastOperation, operation
from ..errors import not_emulated
from ..tensor import Tensor
from ..types import DataType, Layout, MemoryConfig
from ._dispatch import as_float, run


def _dims(dim: Union[int, Sequence[int]]) -> tuple[int, ...]:
    return (int(dim),) if isinstance(dim, int) else tuple(int(d) for d in dim)


def _reduction(name: str, reduce: Callable[[torch.Tensor, tuple[int, ...], bool, bool], torch.Tensor]) -> FastOperation:
    def op(input_tensor: Tensor, dim: Union[int, Sequence[int], None] = None, keepdim: bool = False, *,
           memory_config: Optional[MemoryConfig] = None, compute_kernel_config: Any = None, scalar: float = 1.0,
           correction: bool = True, sub_core_grids: Any = None, fast_and_approximate_mode: bool = False) -> Tensor:
        if dim is None:
            raise not_emulated(f"ttnn.{name}(input_tensor) over every dimension")
        dims, scale, bessel = _dims(dim), float(scalar), bool(correction)
        rank = len(input_tensor.shape)
        dropped = tuple(sorted({d % rank for d in dims}))

        def fn(a: torch.Tensor) -> torch.Tensor:
            return reduce(as_float(a).float() * scale, dims, True, bessel)

        kept = run(f"ttnn.{name}", [input_tensor], fn, layout=Layout.TILE, memory_config=memory_config)
        if keepdim:
            return kept

        def squeeze(a: torch.Tensor) -> torch.Tensor:
            return a.reshape([n for i, n in enumerate(a.shape) if i not in dropped])

        # Measured on ttnn 0.81.1: without keepdim the kept-dims result is an intermediate,
        # reshaped into the output and freed.
        out = run(f"ttnn.{name}", [kept], squeeze, memory_config=memory_config)
        kept._release()
        return out

    op.__name__ = name
    op.__doc__ = f"ttnn.{name}(input_tensor, dim, keepdim=False): along `dim` (values scaled by `scalar` first)."
    return operation(f"ttnn.{name}")(op)


min = _reduction("min", lambda a, d, k, c: torch.amin(a, dim=d, keepdim=k))  # noqa: A001 - ttnn's name
std = _reduction("std", lambda a, d, k, c: torch.std(a, dim=d, keepdim=k, correction=1 if c else 0))
var = _reduction("var", lambda a, d, k, c: torch.var(a, dim=d, keepdim=k, correction=1 if c else 0))


@operation("ttnn.global_avg_pool2d")
def global_avg_pool2d(input_tensor: Tensor, *, memory_config: Optional[MemoryConfig] = None,
                      dtype: Optional[DataType] = None) -> Tensor:
    """The mean over H and W of an [N, H, W, C] tensor: [N, 1, 1, C] in TILE layout."""

    def fn(a: torch.Tensor) -> torch.Tensor:
        return as_float(a).float().mean(dim=(1, 2), keepdim=True)

    # Measured on ttnn 0.81.1: a TILE input of one image is untilized first, into an
    # intermediate freed before returning (several images take another path: not modelled).
    scratch = input_tensor.spec._replace(layout=Layout.ROW_MAJOR) if input_tensor.layout == Layout.TILE else False
    return run("ttnn.global_avg_pool2d", [input_tensor], fn, dtype=dtype, layout=Layout.TILE, memory_config=memory_config,
               temporary=scratch)


@operation("ttnn.tilize_with_zero_padding")
def tilize_with_zero_padding(input_tensor: Tensor, *, memory_config: Optional[MemoryConfig] = None,
                             output_dtype: Optional[DataType] = None, use_multicore: bool = True,
                             sub_core_grids: Any = None) -> Tensor:
    """ROW_MAJOR → TILE, the tile padding zero (the logical shape stays)."""

    def fn(a: torch.Tensor) -> torch.Tensor:
        return a

    return run("ttnn.tilize_with_zero_padding", [input_tensor], fn, dtype=output_dtype, layout=Layout.TILE,
               memory_config=memory_config)
