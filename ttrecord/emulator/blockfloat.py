"""Block floating point tiles (bfloat8_b, bfloat4_b): shared exponents, small mantissas.

Tenstorrent's block formats store a 32×32 tile as 64 shared exponent bytes (one per
16 consecutive values) followed by sign-magnitude mantissas: 8 bits per value for
bfloat8_b (1088-byte pages), 4 bits for bfloat4_b (576-byte pages). The emulator
stores the same sizes and rounds values the same lossy way; the exact bit layout
of the hardware's faces is not reproduced (nothing the emulator exposes shows it).
"""

from __future__ import annotations

import numpy as np

GROUP = 16
GROUPS_PER_TILE = 64
EXPONENT_BIAS = 127


def page_size(mantissa_bits: int) -> int:
    """Bytes per tile: exponents plus (sign + mantissa) bits per value."""
    return GROUPS_PER_TILE + GROUP * GROUPS_PER_TILE * (mantissa_bits + 1) // 8


def encode(tiles: np.ndarray, mantissa_bits: int) -> np.ndarray:
    """(N, 1024) float32 values -> (N, page_size) uint8 pages."""
    n = tiles.shape[0]
    groups = tiles.reshape(n, GROUPS_PER_TILE, GROUP).astype(np.float32)
    _, exponent = np.frexp(np.abs(groups).max(axis=2))  # max = m·2^e, m in [0.5, 1)
    exponent = np.clip(exponent, 1 - EXPONENT_BIAS, 255 - EXPONENT_BIAS)
    scale = np.ldexp(np.float32(1.0), exponent - mantissa_bits)[..., None]
    limit = (1 << mantissa_bits) - 1
    magnitude = np.clip(np.rint(np.abs(groups) / scale), 0, limit).astype(np.uint8)
    codes = magnitude | ((groups < 0).astype(np.uint8) << mantissa_bits)
    codes = codes.reshape(n, -1)
    if mantissa_bits == 3:
        codes = codes[:, 0::2] | (codes[:, 1::2] << 4)
    exponents = (exponent + EXPONENT_BIAS).astype(np.uint8)
    return np.concatenate([exponents, codes], axis=1)


def decode(pages: np.ndarray, mantissa_bits: int) -> np.ndarray:
    """(N, page_size) uint8 pages -> (N, 1024) float32 values."""
    n = pages.shape[0]
    exponent = pages[:, :GROUPS_PER_TILE].astype(np.int32) - EXPONENT_BIAS
    codes = pages[:, GROUPS_PER_TILE:]
    if mantissa_bits == 3:
        codes = np.stack([codes & 0x0F, codes >> 4], axis=2).reshape(n, -1)
    codes = codes.reshape(n, GROUPS_PER_TILE, GROUP)
    magnitude = (codes & ((1 << mantissa_bits) - 1)).astype(np.float32)
    sign = np.where(codes >> mantissa_bits, np.float32(-1.0), np.float32(1.0))
    scale = np.ldexp(np.float32(1.0), exponent - mantissa_bits)[..., None].astype(np.float32)
    return (sign * magnitude * scale).reshape(n, GROUP * GROUPS_PER_TILE)
