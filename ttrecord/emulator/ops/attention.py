"""Attention ops of tt-metal's transformer models: fused-QKV head splitting and
concatenation (prefill and decode forms), rotary embedding (llama form with its
transformation matrix), and scaled dot-product attention (prefill, decode, paged decode).

Decode tensors use tt-metal's [1, batch, heads, head_dim] layout; positions come from a
device tensor (read on every replay) or Python ints (baked into a trace).
"""

from __future__ import annotations

import math
from typing import Any, Optional
from collections.abc import Sequence

import torch

from ..decorators import operation
from ..tensor import Tensor
from ..sharding import CoreCoord, ShardSpec, num_cores_to_corerangeset
from ..types import BufferType, MemoryConfig, TensorMemoryLayout
from ._dispatch import as_float, run, run_multi


@operation("ttnn.experimental.nlp_create_qkv_heads_decode")
def nlp_create_qkv_heads_decode(
    input_tensor: Tensor,
    *,
    num_heads: int,
    num_kv_heads: Optional[int] = None,
    memory_config: Optional[MemoryConfig] = None,
    batch_offset: Any = None,
    slice_size: Any = None,
    **_: Any,
) -> list[Tensor]:
    """[1, 1, B, (nh + 2·nkv)·hd] → Q [1, B, nh, hd], K and V [1, B, nkv, hd]."""
    nh, nkv = int(num_heads), int(num_kv_heads or num_heads)

    def fn(x: torch.Tensor) -> tuple:
        batch = x.shape[-2]
        hd = x.shape[-1] // (nh + 2 * nkv)
        heads = x.reshape(batch, nh + 2 * nkv, hd)
        q, k, v = heads[:, :nh], heads[:, nh : nh + nkv], heads[:, nh + nkv :]
        return q.unsqueeze(0).contiguous(), k.unsqueeze(0).contiguous(), v.unsqueeze(0).contiguous()

    return run_multi("ttnn.experimental.nlp_create_qkv_heads_decode", [input_tensor], fn, memory_config=memory_config)


@operation("ttnn.experimental.nlp_create_qkv_heads")
def nlp_create_qkv_heads(
    input_tensor: Tensor,
    input_tensor_kv: Optional[Tensor] = None,
    *,
    num_heads: int,
    num_kv_heads: Optional[int] = None,
    transpose_k_heads: bool = True,
    memory_config: Optional[MemoryConfig] = None,
    **_: Any,
) -> list[Tensor]:
    """[B, 1, S, (nh + 2·nkv)·hd] → Q [B, nh, S, hd], K [B, nkv, hd, S] (or [B, nkv, S, hd]
    with transpose_k_heads=False), V [B, nkv, S, hd]."""
    nh, nkv = int(num_heads), int(num_kv_heads or num_heads)
    inputs = [input_tensor] + ([input_tensor_kv] if input_tensor_kv is not None else [])
    transpose_k = transpose_k_heads

    def fn(x: torch.Tensor, *kv: torch.Tensor) -> tuple:
        batch, _, seq, width = x.shape
        if kv:
            hd = width // nh
            q = x.reshape(batch, seq, nh, hd)
            rest = kv[0].reshape(batch, seq, 2 * nkv, hd)
            k, v = rest[:, :, :nkv], rest[:, :, nkv:]
        else:
            hd = width // (nh + 2 * nkv)
            heads = x.reshape(batch, seq, nh + 2 * nkv, hd)
            q, k, v = heads[:, :, :nh], heads[:, :, nh : nh + nkv], heads[:, :, nh + nkv :]
        q, k, v = (t.permute(0, 2, 1, 3).contiguous() for t in (q, k, v))
        if transpose_k:
            k = k.transpose(-1, -2).contiguous()
        return q, k, v

    return run_multi("ttnn.experimental.nlp_create_qkv_heads", inputs, fn, memory_config=memory_config)


@operation("ttnn.experimental.nlp_concat_heads")
def nlp_concat_heads(input_tensor: Tensor, *, memory_config: Optional[MemoryConfig] = None, **_: Any) -> Tensor:
    """[B, nh, S, hd] → [B, 1, S, nh·hd]."""

    def fn(x: torch.Tensor) -> torch.Tensor:
        batch, nh, seq, hd = x.shape
        return x.permute(0, 2, 1, 3).reshape(batch, 1, seq, nh * hd)

    return run("ttnn.experimental.nlp_concat_heads", [input_tensor], fn, memory_config=memory_config)


@operation("ttnn.experimental.nlp_concat_heads_decode")
def nlp_concat_heads_decode(
    input_tensor: Tensor, *, num_heads: int, memory_config: Optional[MemoryConfig] = None, **_: Any
) -> Tensor:
    """[1, B, nh(padded), hd] → [1, 1, 32, nh·hd]: the users padded to a tile row (rows past
    B are zero), width-sharded in L1 one head per core over the first nh cores of the compute
    grid unless `memory_config` says otherwise (ttnn 0.81.1, measured)."""
    nh = int(num_heads)
    hd = int(input_tensor.shape[-1])

    def fn(x: torch.Tensor) -> torch.Tensor:
        batch = x.shape[1]
        out = torch.zeros(1, 1, max(32, batch), nh * hd, dtype=x.dtype)
        out[0, 0, :batch] = x[0, :, :nh, :].reshape(batch, nh * hd)
        return out

    if memory_config is None:
        device = input_tensor.device()
        grid = device.compute_with_storage_grid_size() if device is not None else CoreCoord(13, 10)
        cores = num_cores_to_corerangeset(nh, (grid.x, grid.y), row_wise=True)
        memory_config = MemoryConfig(TensorMemoryLayout.WIDTH_SHARDED, BufferType.L1, ShardSpec(cores, [32, hd]))
    return run("ttnn.experimental.nlp_concat_heads_decode", [input_tensor], fn, memory_config=memory_config)


@operation("ttnn.experimental.rotary_embedding_llama")
def rotary_embedding_llama(
    input_tensor: Tensor,
    cos_cache: Tensor,
    sin_cache: Tensor,
    trans_mat: Tensor,
    is_decode_mode: bool = False,
    *,
    memory_config: Optional[MemoryConfig] = None,
    compute_kernel_config: Any = None,
    **_: Any,
) -> Tensor:
    """x·cos + (x @ trans_mat)·sin, the 32×32 transformation matrix applied to each 32-wide
    tile of the head dim (how the kernel rotates pairs). Decode: x [1, B, nh, hd] with
    cos/sin [1, B, 1 or 32, hd]; prefill: x [B, nh, S, hd] with cos/sin [1, 1, S, hd]."""
    decode = is_decode_mode

    def fn(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, trans: torch.Tensor) -> torch.Tensor:
        x, cos, sin, trans = as_float(x), as_float(cos), as_float(sin), as_float(trans)
        tile = trans.shape[-1]
        hd = x.shape[-1]
        # decode passes the matrix repeated once per user ([1, 1, 32·users, 32], height-sharded)
        rotated = (x.reshape(*x.shape[:-1], hd // tile, tile) @ trans.reshape(-1, tile, tile)[0]).reshape(x.shape)
        if decode:
            cos, sin = cos[:, :, :1, :], sin[:, :, :1, :]
        else:
            cos, sin = cos[..., : x.shape[-2], :], sin[..., : x.shape[-2], :]
        return x * cos + rotated * sin

    return run(
        "ttnn.experimental.rotary_embedding_llama",
        [input_tensor, cos_cache, sin_cache, trans_mat],
        fn,
        memory_config=memory_config,
    )


def _attend(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, scale: float, mask: Optional[torch.Tensor]) -> torch.Tensor:
    """q [..., nh, Sq, hd], k/v [..., nkv, Sk, hd]: each group of nh / nkv query heads
    shares one K/V head (broadcast, no copies of the cache)."""
    nh, nkv = q.shape[-3], k.shape[-3]
    lead = q.shape[:-3]
    qg = q.reshape(*lead, nkv, nh // nkv, q.shape[-2], q.shape[-1])
    scores = (qg @ k.unsqueeze(-3).transpose(-1, -2)) * scale
    if mask is not None:
        scores = scores + (mask.unsqueeze(-3) if mask.dim() == scores.dim() - 1 else mask)
    out = torch.softmax(scores, dim=-1) @ v.unsqueeze(-3)
    return out.reshape(q.shape)


@operation("ttnn.transformer.scaled_dot_product_attention")
def scaled_dot_product_attention(
    input_tensor_q: Tensor,
    input_tensor_k: Tensor,
    input_tensor_v: Tensor,
    *,
    attn_mask: Optional[Tensor] = None,
    is_causal: bool = True,
    scale: Optional[float] = None,
    memory_config: Optional[MemoryConfig] = None,
    **_: Any,
) -> Tensor:
    """softmax(q·kᵀ·scale [+ causal or given mask])·v; q [B, nh, S, hd], k/v [B, nkv, S, hd]."""
    causal = is_causal and attn_mask is None
    inputs = [input_tensor_q, input_tensor_k, input_tensor_v] + ([attn_mask] if attn_mask is not None else [])

    def fn(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, *mask: torch.Tensor) -> torch.Tensor:
        q, k, v = as_float(q), as_float(k), as_float(v)
        s = scale if scale is not None else 1.0 / math.sqrt(q.shape[-1])
        extra = as_float(mask[0]) if mask else None
        if causal:
            sq, sk = q.shape[-2], k.shape[-2]
            extra = torch.full((sq, sk), float("-inf")).triu(1 + sk - sq)
        return _attend(q, k, v, s, extra)

    return run("ttnn.transformer.scaled_dot_product_attention", inputs, fn, memory_config=memory_config)


def _decode(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, positions: Sequence[int], scale: Optional[float]) -> torch.Tensor:
    """q [1, B, nh, hd]; k/v [B, nkv, S, hd]; user b attends to positions 0..positions[b]
    (a negative position marks an inactive user: its output is zero)."""
    q, k, v = as_float(q), as_float(k), as_float(v)
    s = scale if scale is not None else 1.0 / math.sqrt(q.shape[-1])
    pos = torch.tensor(list(positions), dtype=torch.long)
    mask = torch.where(torch.arange(k.shape[-2]).unsqueeze(0) <= pos.unsqueeze(1), 0.0, float("-inf"))
    mask[pos < 0] = 0.0  # keep the softmax finite; the rows are zeroed below
    out = _attend(q[0].unsqueeze(2), k, v, s, mask[:, None, None, :]).squeeze(2)  # [B, nh, hd]
    out[pos < 0] = 0.0
    return out.unsqueeze(0)


def _unpage(cache: torch.Tensor, table: torch.Tensor) -> torch.Tensor:
    """[blocks, nkv, bs, hd] + page table [B, n] → [B, nkv, n·bs, hd]."""
    pages = cache[table.long()]  # [B, n, nkv, bs, hd]
    batch, n, nkv, bs, hd = pages.shape
    return pages.permute(0, 2, 1, 3, 4).reshape(batch, nkv, n * bs, hd)


def _sdpa_decode(name: str, q: Tensor, k: Tensor, v: Tensor, page_table: Optional[Tensor], cur_pos: Sequence[int],
                 cur_pos_tensor: Optional[Tensor], scale: Optional[float], memory_config: Any) -> Tensor:
    inputs = [q, k, v] + ([cur_pos_tensor] if cur_pos_tensor is not None else []) + ([page_table] if page_table is not None else [])
    fixed = [int(p) for p in cur_pos]
    has_pos, paged = cur_pos_tensor is not None, page_table is not None

    def fn(qv: torch.Tensor, kv: torch.Tensor, vv: torch.Tensor, *rest: torch.Tensor) -> torch.Tensor:
        rest_iter = iter(rest)
        positions = next(rest_iter).reshape(-1).tolist() if has_pos else fixed
        if paged:
            table = next(rest_iter)
            kv, vv = _unpage(kv, table), _unpage(vv, table)
        return _decode(qv, kv, vv, positions, scale)

    return run(name, inputs, fn, memory_config=memory_config)


@operation("ttnn.transformer.scaled_dot_product_attention_decode")
def scaled_dot_product_attention_decode(
    input_tensor_q: Tensor,
    input_tensor_k: Tensor,
    input_tensor_v: Tensor,
    *,
    is_causal: bool = True,
    attn_mask: Optional[Tensor] = None,
    cur_pos: Sequence[int] = (),
    cur_pos_tensor: Optional[Tensor] = None,
    scale: Optional[float] = None,
    memory_config: Optional[MemoryConfig] = None,
    **_: Any,
) -> Tensor:
    """One query token per user against its cache up to its own position."""
    return _sdpa_decode("ttnn.transformer.scaled_dot_product_attention_decode", input_tensor_q, input_tensor_k,
                        input_tensor_v, None, cur_pos, cur_pos_tensor, scale, memory_config)


@operation("ttnn.transformer.paged_scaled_dot_product_attention_decode")
def paged_scaled_dot_product_attention_decode(
    input_tensor_q: Tensor,
    input_tensor_k: Tensor,
    input_tensor_v: Tensor,
    page_table_tensor: Tensor,
    *,
    is_causal: bool = True,
    attn_mask: Optional[Tensor] = None,
    cur_pos_tensor: Optional[Tensor] = None,
    scale: Optional[float] = None,
    memory_config: Optional[MemoryConfig] = None,
    **_: Any,
) -> Tensor:
    """Decode attention over a paged cache [blocks, nkv, block_size, hd]."""
    return _sdpa_decode("ttnn.transformer.paged_scaled_dot_product_attention_decode", input_tensor_q, input_tensor_k,
                        input_tensor_v, page_table_tensor, (), cur_pos_tensor, scale, memory_config)
