"""bfloat8_b / bfloat4_b tiles: real page sizes (1088 / 576 bytes) and block-float rounding."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from ttrecord import emulator as ttnn
from ttrecord.emulator import blockfloat


@pytest.mark.parametrize("dtype,page,tolerance", [(ttnn.bfloat8_b, 1088, 2**-6), (ttnn.bfloat4_b, 576, 2**-2)])
def test_block_float_tiles_round_trip_within_the_mantissa_precision(device, dtype, page, tolerance):
    """GIVEN values in a group share one exponent THEN each comes back within 2^-mantissa of the group max."""
    torch.manual_seed(0)
    x = torch.randn(64, 96)
    t = ttnn.from_torch(x, dtype=dtype, layout=ttnn.TILE_LAYOUT, device=device)
    assert (t.buffer_page_size(), t.buffer_num_pages()) == (page, 6)
    back = ttnn.to_torch(t)
    group_max = x.reshape(-1, 16).abs().max(dim=1).values.max().item()
    assert (back - x).abs().max().item() <= tolerance * group_max
    assert torch.equal(ttnn.to_torch(ttnn.from_torch(back, dtype=dtype, layout=ttnn.TILE_LAYOUT, device=device)), back)


def test_block_float_needs_tile_layout(device):
    with pytest.raises(RuntimeError, match="only supported in TILE layout"):
        ttnn.from_torch(torch.zeros(32, 32), dtype=ttnn.bfloat8_b, layout=ttnn.ROW_MAJOR_LAYOUT, device=device)


def test_exact_values_survive_encoding():
    tiles = np.zeros((1, 1024), dtype=np.float32)
    tiles[0, :16] = [1, -1, 0.5, 2, -2, 0, 0.25, 1.5, -0.75, 0, 0, 0, 0, 0, 0, 1]
    assert np.array_equal(blockfloat.decode(blockfloat.encode(tiles, 7), 7), tiles)


def test_matmul_with_bfloat8_b_weights(device):
    torch.manual_seed(1)
    a, w = torch.randn(32, 64), torch.randn(64, 32)
    out = ttnn.matmul(
        ttnn.from_torch(a, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device),
        ttnn.from_torch(w, dtype=ttnn.bfloat8_b, layout=ttnn.TILE_LAYOUT, device=device),
    )
    assert out.dtype == ttnn.bfloat16
    assert torch.allclose(ttnn.to_torch(out).float(), a @ w, atol=0.5, rtol=0.05)
