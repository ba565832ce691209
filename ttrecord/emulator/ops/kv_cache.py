"""KV-cache ops, all in place on the cache tensor: fill_cache, update_cache and the paged
forms tt-metal's LLM decode paths call. The cache keeps its address, so a trace that
updates it replays into the same buffer."""

from __future__ import annotations

from typing import Any, Optional
from collections.abc import Sequence

import torch

from ..decorators import operation
from ..tensor import Tensor
from ._dispatch import run


@operation("ttnn.fill_cache")
def fill_cache(cache_tensor: Tensor, input_tensor: Tensor, batch_idx: int, **_: Any) -> Tensor:
    """cache[batch_idx, :, :S, :] = input[0] (prefill of one user)."""
    b = int(batch_idx)

    def fn(cache: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        out = cache.clone()
        out[b, :, : x.shape[-2], :] = x[0].to(cache.dtype)
        return out

    return run("ttnn.fill_cache", [cache_tensor, input_tensor], fn, output_tensor=cache_tensor)


@operation("ttnn.update_cache")
def update_cache(cache_tensor: Tensor, input_tensor: Tensor, update_index: int, batch_offset: int = 0, **_: Any) -> Tensor:
    """cache[b, :, update_index, :] = input[0, :, batch_offset + b, :] for every user b
    (a Python index: baked into a trace)."""
    pos, offset = int(update_index), int(batch_offset)

    def fn(cache: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        out = cache.clone()
        batch = cache.shape[0]
        out[:, :, pos, :] = x[0, :, offset : offset + batch, :].permute(1, 0, 2).to(cache.dtype)
        return out

    return run("ttnn.update_cache", [cache_tensor, input_tensor], fn, output_tensor=cache_tensor)


def _paged_update(cache: torch.Tensor, x: torch.Tensor, positions: torch.Tensor, page_table: Optional[torch.Tensor], offset: int) -> torch.Tensor:
    out = cache.clone()
    kv_heads = cache.shape[1]
    for b, pos in enumerate(positions.reshape(-1).tolist()):
        if pos < 0:  # an inactive user slot
            continue
        row = x[0, b + offset, :kv_heads, :].to(cache.dtype)
        if page_table is None:
            out[b, :, pos, :] = row
        else:
            block_size = cache.shape[2]
            block = int(page_table[b, pos // block_size])
            out[block, :, pos % block_size, :] = row
    return out


@operation("ttnn.experimental.paged_update_cache")
def paged_update_cache(
    cache_tensor: Tensor,
    input_tensor: Tensor,
    *,
    update_idxs: Sequence[int] = (),
    update_idxs_tensor: Optional[Tensor] = None,
    share_cache: Optional[bool] = None,
    page_table: Optional[Tensor] = None,
    batch_offset: int = 0,
    **_: Any,
) -> Tensor:
    """Write each user's new K or V row at its own position: `update_idxs_tensor` (a device
    tensor, read on replay) or `update_idxs` (Python ints, baked into a trace); with
    `page_table` the cache is [blocks, kv_heads, block_size, head_dim] and position p of
    user b lives in block page_table[b, p // block_size]."""
    offset = int(batch_offset)
    inputs = [cache_tensor, input_tensor]
    if update_idxs_tensor is not None:
        inputs.append(update_idxs_tensor)
    fixed = torch.tensor(list(update_idxs), dtype=torch.int64) if update_idxs_tensor is None else None
    paged = page_table is not None
    if page_table is not None:
        inputs.append(page_table)

    def fn(cache: torch.Tensor, x: torch.Tensor, *rest: torch.Tensor) -> torch.Tensor:
        rest_iter = iter(rest)
        positions = next(rest_iter).long() if fixed is None else fixed
        table = next(rest_iter).long() if paged else None
        return _paged_update(cache, x, positions, table, offset)

    return run("ttnn.experimental.paged_update_cache", inputs, fn, output_tensor=cache_tensor)


@operation("ttnn.experimental.paged_fill_cache")
def paged_fill_cache(
    cache_tensor: Tensor,
    input_tensor: Tensor,
    page_table: Tensor,
    *,
    batch_idx: int = 0,
    batch_idx_tensor: Optional[Tensor] = None,
    **_: Any,
) -> Tensor:
    """Prefill user `batch_idx`'s sequence [1, kv_heads, S, head_dim] into its pages."""
    inputs = [cache_tensor, input_tensor, page_table] + ([batch_idx_tensor] if batch_idx_tensor is not None else [])
    fixed = int(batch_idx)

    def fn(cache: torch.Tensor, x: torch.Tensor, table: torch.Tensor, *idx: torch.Tensor) -> torch.Tensor:
        out = cache.clone()
        b = int(idx[0].reshape(-1)[0]) if idx else fixed
        block_size = cache.shape[2]
        seq = x.shape[-2]
        for start in range(0, seq, block_size):
            block = int(table[b, start // block_size])
            chunk = x[0, :, start : start + block_size, :].to(cache.dtype)
            out[block, :, : chunk.shape[1], :] = chunk
        return out

    return run("ttnn.experimental.paged_fill_cache", inputs, fn, output_tensor=cache_tensor)
