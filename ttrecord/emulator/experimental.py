"""`ttnn.experimental`: ops outside the stable namespace (so recorders can be
tested on submodule attributes such as `ttnn.experimental.rotary_embedding`)."""

from __future__ import annotations

from typing import Any, Optional

import torch

from .decorators import operation
from .ops._dispatch import as_float, run
from .tensor import Tensor
from .types import MemoryConfig


@operation("ttnn.experimental.rotary_embedding")
def rotary_embedding(
    input_tensor: Tensor,
    cos_cache: Tensor,
    sin_cache: Tensor,
    token_index: Optional[int] = None,
    *,
    memory_config: Optional[MemoryConfig] = None,
    compute_kernel_config: Any = None,
    **_: Any,
) -> Tensor:
    """Rotary position embedding: x·cos + rotate_half(x)·sin, caches indexed by
    `token_index` (a Python int, so a trace bakes in the position)."""
    position = token_index
    width = input_tensor.shape[-1]
    if width != 32 and width % 64:
        raise RuntimeError(
            "TT_FATAL @ ttnn/cpp/ttnn/operations/experimental/transformer/rotary_embedding/device/"
            f"rotary_embedding_device_operation.cpp:0\ninfo:\nInput X dimension ({width}) must be either 32 (single "
            "tile) or divisible by 64 (rotate_half midpoint must align with a tile boundary).")

    def fn(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        x, cos, sin = as_float(x), as_float(cos), as_float(sin)
        if position is not None:
            cos = cos[..., position : position + 1, :]
            sin = sin[..., position : position + 1, :]
        half = x.shape[-1] // 2
        rotated = torch.cat((-x[..., half:], x[..., :half]), dim=-1)
        return x * cos + rotated * sin

    return run(
        "ttnn.experimental.rotary_embedding",
        [input_tensor, cos_cache, sin_cache],
        fn,
        memory_config=memory_config,
    )
