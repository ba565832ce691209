"""Conversion between tensor values and device pages.

TILE layout pages are 32×32 tiles (2048 bytes in bfloat16, 4096 in float32),
ordered row-major over (batch…, tile row, tile column); within a tile the
elements are row-major (real hardware stores four 16×16 faces; nothing the
emulator exposes can tell the difference). ROW_MAJOR pages are rows of the last
dimension. Values travel as torch tensors; bytes as numpy uint8 arrays.
"""

from __future__ import annotations

import builtins
import functools
from typing import NamedTuple, Optional

import numpy as np
import torch

from . import blockfloat
from .types import (
    BLOCK_FLOAT_MANTISSA,
    TILE_SIZE,
    DataType,
    Layout,
    MemoryConfig,
    Shape,
    element_size,
    padded_shape,
    torch_dtype,
)

TILE_ELEMENTS = TILE_SIZE * TILE_SIZE


class Geometry(NamedTuple):
    """Derived page layout of a (shape, dtype, layout), cached: ops are hot paths."""

    padded_shape: Shape
    page_size: int
    num_pages: int
    tiles_h: int  # tile rows / columns of the last two padded dims (TILE only)
    tiles_w: int
    is_padded: bool  # padded_shape differs from the logical shape


@functools.lru_cache(maxsize=4096)
def geometry(shape: Shape, dtype: DataType, layout: Layout) -> Geometry:
    esize = element_size(dtype)
    mantissa = BLOCK_FLOAT_MANTISSA.get(dtype)
    if mantissa is not None and layout != Layout.TILE:
        raise RuntimeError(
            f"TT_FATAL @ ttnn/core/tensor/tensor_impl.cpp:0: layout == Layout::TILE\ninfo:\n"
            f"{dtype.name} is only supported in TILE layout"
        )
    if layout == Layout.TILE:
        padded = padded_shape(shape, layout)
        return Geometry(
            padded,
            blockfloat.page_size(mantissa) if mantissa is not None else TILE_ELEMENTS * esize,
            max(padded.volume() // TILE_ELEMENTS, 1),
            padded[-2] // TILE_SIZE,
            padded[-1] // TILE_SIZE,
            tuple(padded) != tuple(shape),
        )
    width = max(shape[-1], 1) if len(shape) else 1
    return Geometry(shape, width * esize, max(shape.volume() // width, 1), 0, 0, False)


class TensorSpec(NamedTuple):
    """What a tensor is, independent of where it is stored."""

    shape: Shape
    dtype: DataType
    layout: Layout
    memory_config: Optional[MemoryConfig] = None

    @property
    def geometry(self) -> Geometry:
        return geometry(self.shape, self.dtype, self.layout)

    @property
    def padded_shape(self) -> Shape:
        return geometry(self.shape, self.dtype, self.layout).padded_shape

    def page_size(self) -> int:
        return geometry(self.shape, self.dtype, self.layout).page_size

    def num_pages(self) -> int:
        return geometry(self.shape, self.dtype, self.layout).num_pages


def to_storage(values: torch.Tensor, dtype: DataType) -> torch.Tensor:
    """`values` converted to the torch dtype that holds `dtype` (rounding to bf16 etc.)."""
    target = torch_dtype(dtype)
    if values.dtype != target:
        values = values.to(target)
    return values


def encode(values: torch.Tensor, spec: TensorSpec, aligned_page_size: int) -> np.ndarray:
    """Pages (num_pages, aligned_page_size) uint8 holding `values` laid out per `spec`."""
    geo = geometry(spec.shape, spec.dtype, spec.layout)
    values = to_storage(values, spec.dtype)
    if spec.layout == Layout.TILE:
        padded = geo.padded_shape
        if geo.is_padded:
            full_rank = spec.shape.to_rank(len(padded))
            full = torch.zeros(tuple(padded), dtype=values.dtype)
            full[tuple(builtins.slice(0, d) for d in full_rank)] = values.reshape(tuple(full_rank))
            values = full
        if geo.tiles_w == 1:  # one tile column: tile order is already row-major
            tiles = values
        else:
            tiles = (
                values.reshape(-1, geo.tiles_h, TILE_SIZE, geo.tiles_w, TILE_SIZE)
                .permute(0, 1, 3, 2, 4)
                .contiguous()
            )
    else:
        tiles = values
    if not tiles.is_contiguous():
        tiles = tiles.contiguous()
    mantissa = BLOCK_FLOAT_MANTISSA.get(spec.dtype)
    if mantissa is not None:
        pages = blockfloat.encode(tiles.reshape(geo.num_pages, TILE_ELEMENTS).numpy(), mantissa)
    else:
        pages = tiles.reshape(-1).view(torch.uint8).numpy().reshape(geo.num_pages, geo.page_size)
    if aligned_page_size != geo.page_size:
        padded_pages = np.zeros((geo.num_pages, aligned_page_size), dtype=np.uint8)
        padded_pages[:, : geo.page_size] = pages
        pages = padded_pages
    return pages


def decode(pages: np.ndarray, spec: TensorSpec) -> torch.Tensor:
    """Values (logical shape, storage torch dtype) held by `pages` laid out per `spec`."""
    geo = geometry(spec.shape, spec.dtype, spec.layout)
    if pages.shape[1] != geo.page_size:
        pages = np.ascontiguousarray(pages[:, : geo.page_size])
    mantissa = BLOCK_FLOAT_MANTISSA.get(spec.dtype)
    if mantissa is not None:
        raw = torch.from_numpy(blockfloat.decode(pages, mantissa))
    else:
        raw = torch.from_numpy(pages).view(torch_dtype(spec.dtype))
    if spec.layout == Layout.TILE:
        padded = geo.padded_shape
        if not geo.is_padded and geo.tiles_w == 1:
            return raw.reshape(spec.shape)
        if geo.tiles_w == 1:
            values = raw.reshape(tuple(padded))
        else:
            values = (
                raw.reshape(-1, geo.tiles_h, geo.tiles_w, TILE_SIZE, TILE_SIZE)
                .permute(0, 1, 3, 2, 4)
                .reshape(tuple(padded))
            )
        if geo.is_padded:
            full_rank = spec.shape.to_rank(len(padded))
            values = values[tuple(builtins.slice(0, d) for d in full_rank)]
        return values.reshape(spec.shape)
    return raw.reshape(spec.shape)
