"""Moving tensors between interleaved and sharded memory, and building sharded memory configs.

Each conversion allocates its output at the address the real allocator gives a buffer of
that spec (sharded L1 top-down, sharded DRAM bottom-up, pinned by
tests/realttnn/test_sharded_contract.py) and copies the values: the emulator's sharded
buffer really holds shard i on core i, so a replay writing there hits exactly those cores.
"""

from __future__ import annotations

import math
from typing import Any, Optional
from collections.abc import Sequence

import torch

from ..decorators import operation
from ..sharding import CoreCoord, CoreRange, CoreRangeSet, ShardOrientation, ShardSpec, ShardStrategy
from ..tensor import Tensor
from ..types import BufferType, CoreGrid, DataType, MemoryConfig, TensorMemoryLayout
from ._dispatch import _fatal, run

_LAYOUT_OF = {
    ShardStrategy.HEIGHT: TensorMemoryLayout.HEIGHT_SHARDED,
    ShardStrategy.WIDTH: TensorMemoryLayout.WIDTH_SHARDED,
    ShardStrategy.BLOCK: TensorMemoryLayout.BLOCK_SHARDED,
}


def _identity(a: torch.Tensor) -> torch.Tensor:
    return a


def _grid_of(core_grid: Any) -> CoreRangeSet:
    if isinstance(core_grid, CoreRangeSet):
        return core_grid
    if isinstance(core_grid, CoreGrid):
        return CoreRangeSet([CoreRange(CoreCoord(0, 0), CoreCoord(core_grid.x - 1, core_grid.y - 1))])
    if isinstance(core_grid, (list, tuple)) and len(core_grid) == 2 and all(isinstance(g, CoreGrid) for g in core_grid):
        first, second = core_grid
        return CoreRangeSet([
            CoreRange(CoreCoord(0, 0), CoreCoord(first.x - 1, first.y - 1)),
            CoreRange(CoreCoord(0, first.y), CoreCoord(second.x - 1, first.y)),
        ])
    raise RuntimeError("Invalid core_grid type")


def create_sharded_memory_config(
    shape: Sequence[int],
    core_grid: Any,
    strategy: Any,
    orientation: Optional[ShardOrientation] = None,
    use_height_and_width_as_shard_shape: bool = False,
) -> MemoryConfig:
    """An L1 sharded MemoryConfig for a tensor of `shape` over `core_grid` (ttnn.core's rules:
    the tensor is seen as [prod(dims[:-1]), W]; shards must divide it evenly)."""
    memory_layout = strategy if isinstance(strategy, TensorMemoryLayout) else _LAYOUT_OF[strategy]
    orientation = orientation or ShardOrientation.ROW_MAJOR
    grid = _grid_of(core_grid)
    if isinstance(core_grid, CoreRangeSet) and not use_height_and_width_as_shard_shape:
        raise RuntimeError("height and width must be shard shape with CoreRangeSet")
    *batch, height, width = [int(d) for d in shape]
    if use_height_and_width_as_shard_shape:
        shard = [height, width] if orientation == ShardOrientation.ROW_MAJOR else [width, height]
    else:
        rows = math.prod(batch) * height
        if memory_layout == TensorMemoryLayout.BLOCK_SHARDED:
            across_h, across_w = (core_grid.y, core_grid.x)
            if orientation == ShardOrientation.COL_MAJOR:
                across_h, across_w = across_w, across_h
            if rows % across_h or width % across_w:
                raise RuntimeError("Invalid sharding core_grid")
            shard = [rows // across_h, width // across_w]
        else:
            cores = grid.num_cores()
            if memory_layout == TensorMemoryLayout.HEIGHT_SHARDED:
                if rows % cores:
                    raise RuntimeError("Invalid sharding core_grid")
                shard = [rows // cores, width]
            else:
                if width % cores:
                    raise RuntimeError("Invalid sharding core_grid")
                shard = [rows, width // cores]
    return MemoryConfig(memory_layout, BufferType.L1, ShardSpec(grid, shard, orientation))


create_sharded_memory_config_ = create_sharded_memory_config


def _convert(name: str, tensor: Tensor, memory_config: MemoryConfig, dtype: Optional[DataType], output_tensor: Any = None) -> Tensor:
    return run(name, [tensor], _identity, dtype=dtype, memory_config=memory_config, output_tensor=output_tensor)


@operation("ttnn.interleaved_to_sharded")
def interleaved_to_sharded(
    input_tensor: Tensor,
    grid: Any = None,
    shard_shape: Optional[Sequence[int]] = None,
    shard_scheme: Optional[TensorMemoryLayout] = None,
    shard_orientation: Optional[ShardOrientation] = None,
    output_dtype: Optional[DataType] = None,
    *,
    keep_l1_aligned: bool = False,
    **_: Any,
) -> Tensor:
    """Interleaved → sharded: `(tensor, sharded_memory_config)` or
    `(tensor, grid, shard_shape, shard_scheme, shard_orientation)`."""
    if isinstance(grid, MemoryConfig):
        memory_config = grid
    else:
        if shard_shape is None or shard_scheme is None:
            raise TypeError("interleaved_to_sharded(): incompatible function arguments")
        spec = ShardSpec(_grid_of(grid), shard_shape, shard_orientation or ShardOrientation.ROW_MAJOR)
        memory_config = MemoryConfig(shard_scheme, BufferType.L1, spec)
    if not memory_config.is_sharded():
        raise _fatal("interleaved_to_sharded: output memory config must be sharded")
    if input_tensor.is_sharded():
        raise _fatal("interleaved_to_sharded: input tensor must be interleaved")
    return _convert("ttnn.interleaved_to_sharded", input_tensor, memory_config, output_dtype)


@operation("ttnn.sharded_to_interleaved")
def sharded_to_interleaved(
    input_tensor: Tensor,
    memory_config: Optional[MemoryConfig] = None,
    output_dtype: Optional[DataType] = None,
    *,
    is_l1_aligned: bool = False,
    **_: Any,
) -> Tensor:
    """Sharded → interleaved (DRAM unless `memory_config` says otherwise)."""
    if not input_tensor.is_sharded():
        raise _fatal("sharded_to_interleaved: input tensor must be sharded")
    memory_config = memory_config or MemoryConfig(TensorMemoryLayout.INTERLEAVED, BufferType.DRAM)
    if memory_config.is_sharded():
        raise _fatal("sharded_to_interleaved: output memory config must be interleaved")
    return _convert("ttnn.sharded_to_interleaved", input_tensor, memory_config, output_dtype)


@operation("ttnn.reshard")
def reshard(
    input_tensor: Tensor,
    output_memory_config: MemoryConfig,
    output_tensor: Optional[Tensor] = None,
    **_: Any,
) -> Tensor:
    """Sharded → another sharding; with `output_tensor` it writes into that tensor in place
    (how traced CNN executors move a new input into the captured sharded input)."""
    if not input_tensor.is_sharded() or not output_memory_config.is_sharded():
        raise _fatal("reshard: input and output must both be sharded")
    return _convert("ttnn.reshard", input_tensor, output_memory_config, None, output_tensor)


@operation("ttnn.to_memory_config")
def to_memory_config(
    tensor: Tensor,
    memory_config: MemoryConfig,
    dtype: Optional[DataType] = None,
    output_tensor: Optional[Tensor] = None,
    **_: Any,
) -> Tensor:
    """Between any two memory configs (DRAM/L1, interleaved/sharded); returns the input
    itself when it is already there, as ttnn does."""
    if output_tensor is None and memory_config == tensor.memory_config() and (dtype is None or dtype == tensor.dtype):
        return tensor
    return _convert("ttnn.to_memory_config", tensor, memory_config, dtype, output_tensor)
