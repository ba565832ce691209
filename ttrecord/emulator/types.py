"""Value types of the ttnn API: data types, layouts, buffer types, memory configs, shapes.

Enum names and numeric values follow ttnn 0.81.1 so that code comparing
`tensor.dtype == ttnn.bfloat16` or printing `tensor.layout` behaves the same
on both backends. Like nanobind's enums they are plain `enum.Enum`s: every
member is truthy (`layout or ttnn.TILE_LAYOUT` keeps ROW_MAJOR) and prints as
`BufferType.DRAM`.
"""

from __future__ import annotations

from .errors import NotEmulatedAttributes, NotEmulatedEnumType

import enum
from typing import Any, Optional
from collections.abc import Iterable, Iterator

import torch

TILE_SIZE = 32


class DataType(enum.Enum, metaclass=NotEmulatedEnumType):
    BFLOAT16 = 0
    FLOAT32 = 1
    UINT32 = 2
    BFLOAT8_B = 3
    BFLOAT4_B = 4
    UINT8 = 5
    UINT16 = 6
    INT32 = 7
    INVALID = 8


class Layout(enum.Enum, metaclass=NotEmulatedEnumType):
    ROW_MAJOR = 0
    TILE = 1
    INVALID = 2


class BufferType(enum.Enum, metaclass=NotEmulatedEnumType):
    DRAM = 0
    L1 = 1
    SYSTEM_MEMORY = 2
    L1_SMALL = 3
    TRACE = 4


class TensorMemoryLayout(enum.Enum, metaclass=NotEmulatedEnumType):
    INTERLEAVED = 0
    HEIGHT_SHARDED = 2
    WIDTH_SHARDED = 3
    BLOCK_SHARDED = 4


class StorageType(enum.Enum, metaclass=NotEmulatedEnumType):
    HOST = 0
    DEVICE = 1


# Element storage of each supported data type: torch dtype used for host values,
# bytes per element on device. uint32 is held in torch as int32 bits, as
# real ttnn's to_torch does (torch has no general uint32 arithmetic).
_TORCH_DTYPES = {
    DataType.BFLOAT16: torch.bfloat16,
    DataType.FLOAT32: torch.float32,
    DataType.UINT32: torch.int32,
    DataType.INT32: torch.int32,
    DataType.UINT16: torch.int16,
    DataType.UINT8: torch.uint8,
    DataType.BFLOAT8_B: torch.float32,  # block-float values are held as float32 on the host
    DataType.BFLOAT4_B: torch.float32,
}
# Block floating point types: mantissa bits (their tiles have their own page sizes).
BLOCK_FLOAT_MANTISSA = {DataType.BFLOAT8_B: 7, DataType.BFLOAT4_B: 3}
_ELEMENT_SIZES = {
    DataType.BFLOAT16: 2,
    DataType.FLOAT32: 4,
    DataType.UINT32: 4,
    DataType.INT32: 4,
    DataType.UINT16: 2,
    DataType.UINT8: 1,
    DataType.BFLOAT8_B: 1,
    DataType.BFLOAT4_B: 1,
}
_FROM_TORCH = {
    torch.bfloat16: DataType.BFLOAT16,
    torch.float32: DataType.FLOAT32,
    torch.float64: DataType.FLOAT32,
    torch.float16: DataType.BFLOAT16,
    torch.int32: DataType.INT32,
    torch.int64: DataType.INT32,
    torch.int16: DataType.UINT16,
    torch.uint8: DataType.UINT8,
    torch.bool: DataType.UINT8,
}


def torch_dtype(dtype: DataType) -> torch.dtype:
    """The torch dtype that holds values of `dtype` on the host."""
    try:
        return _TORCH_DTYPES[dtype]
    except KeyError:
        raise RuntimeError(f"ttnn emulator: data type {dtype!r} is not supported") from None


def element_size(dtype: DataType) -> int:
    """Bytes per element of `dtype` in device memory."""
    try:
        return _ELEMENT_SIZES[dtype]
    except KeyError:
        raise RuntimeError(f"ttnn emulator: data type {dtype!r} is not supported") from None


def dtype_from_torch(dtype: torch.dtype) -> DataType:
    """The ttnn data type a torch tensor of `dtype` becomes when no dtype is given."""
    return _FROM_TORCH.get(dtype, DataType.FLOAT32)


class MemoryConfig(NotEmulatedAttributes):
    """Where a device tensor lives: buffer type, memory layout and, when sharded, the shard spec."""

    __slots__ = ("memory_layout", "buffer_type", "shard_spec", "nd_shard_spec")

    def __init__(
        self,
        memory_layout: TensorMemoryLayout = TensorMemoryLayout.INTERLEAVED,
        buffer_type: BufferType = BufferType.DRAM,
        shard_spec: Optional[object] = None,
        nd_shard_spec: Optional[object] = None,
    ) -> None:
        self.memory_layout = TensorMemoryLayout(memory_layout)
        self.buffer_type = BufferType(buffer_type)
        self.shard_spec = shard_spec
        self.nd_shard_spec = nd_shard_spec

    def is_sharded(self) -> bool:
        return self.memory_layout != TensorMemoryLayout.INTERLEAVED

    def is_l1(self) -> bool:
        return self.buffer_type == BufferType.L1

    def is_dram(self) -> bool:
        return self.buffer_type == BufferType.DRAM

    def with_shard_spec(self, shard_spec: Optional[object]) -> MemoryConfig:
        return MemoryConfig(self.memory_layout, self.buffer_type, shard_spec)

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, MemoryConfig)
            and self.memory_layout == other.memory_layout
            and self.buffer_type == other.buffer_type
            and self.shard_spec == other.shard_spec
        )

    def __hash__(self) -> int:
        return hash((self.memory_layout, self.buffer_type, self.shard_spec))

    def __repr__(self) -> str:
        shard = "std::nullopt" if self.shard_spec is None else repr(self.shard_spec)
        return (
            f"MemoryConfig(memory_layout=TensorMemoryLayout::{self.memory_layout.name},"
            f"buffer_type=BufferType::{self.buffer_type.name},shard_spec={shard},"
            "nd_shard_spec=std::nullopt,created_with_nd_shard_spec=0,per_core_allocation=0,"
            "range_lockstep_allocation=0)"
        )


DRAM_MEMORY_CONFIG = MemoryConfig(TensorMemoryLayout.INTERLEAVED, BufferType.DRAM)
L1_MEMORY_CONFIG = MemoryConfig(TensorMemoryLayout.INTERLEAVED, BufferType.L1)
# Sharded L1 configs without a shard spec: the op (or, in the emulator,
# sharding.default_shard_spec) decides the grid and shard shape.
L1_HEIGHT_SHARDED_MEMORY_CONFIG = MemoryConfig(TensorMemoryLayout.HEIGHT_SHARDED, BufferType.L1)
L1_WIDTH_SHARDED_MEMORY_CONFIG = MemoryConfig(TensorMemoryLayout.WIDTH_SHARDED, BufferType.L1)
L1_BLOCK_SHARDED_MEMORY_CONFIG = MemoryConfig(TensorMemoryLayout.BLOCK_SHARDED, BufferType.L1)


class Shape(NotEmulatedAttributes, tuple):
    """A tensor shape; a tuple of ints that prints like ttnn's `Shape([1, 32])`."""

    def __new__(cls, shape: Iterable[int] = ()) -> Shape:
        return super().__new__(cls, (int(d) for d in shape))

    @classmethod
    def of(cls, dims: tuple) -> Shape:
        """Fast path for a tuple/torch.Size of ints (hot in ops)."""
        return tuple.__new__(cls, dims)

    @property
    def rank(self) -> int:
        return len(self)

    def volume(self) -> int:
        v = 1
        for d in self:
            v *= d
        return v

    def to_rank(self, rank: int) -> Shape:
        if rank >= len(self):
            return Shape((1,) * (rank - len(self)) + tuple(self))
        return Shape(self[len(self) - rank :])

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (tuple, list)):
            return tuple(self) == tuple(other)
        return NotImplemented

    def __ne__(self, other: object) -> bool:
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    __hash__ = tuple.__hash__

    def __repr__(self) -> str:
        return f"Shape({list(self)})"

    __str__ = __repr__


class MeshCoordinate(NotEmulatedAttributes):
    """One device's place in a mesh: MeshCoordinate(row, col), (a, b, c) or (coords=[...]).
    Compared and hashed by value, as ops taking `mesh_coords=` get a set of them."""

    __slots__ = ("_coords",)

    def __init__(self, c0: Any = None, c1: Optional[int] = None, c2: Optional[int] = None, coords: Any = None) -> None:
        if coords is None:
            coords = c0 if isinstance(c0, (tuple, list)) else [c for c in (c0, c1, c2) if c is not None]
        self._coords = tuple(int(c) for c in coords)

    def dims(self) -> int:
        return len(self._coords)

    def __getitem__(self, index: int) -> int:
        return self._coords[index]

    def __iter__(self) -> Iterator[int]:
        return iter(self._coords)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, MeshCoordinate) and self._coords == other._coords

    def __hash__(self) -> int:
        return hash(self._coords)

    def __repr__(self) -> str:
        return f"MeshCoordinate([{', '.join(map(str, self._coords))}])"


class MeshShape(NotEmulatedAttributes):
    """Rows × columns of devices in a mesh."""

    __slots__ = ("_dims",)

    def __init__(self, s0: Any = None, s1: Optional[int] = None, s2: Optional[int] = None, *dims: int,
                 shape: Any = None) -> None:
        """MeshShape(rows, cols), MeshShape(a, b, c), or MeshShape(shape) with a sequence."""
        if shape is None:
            shape = s0 if isinstance(s0, (tuple, list, MeshShape)) else [d for d in (s0, s1, s2, *dims) if d is not None]
        self._dims = tuple(int(d) for d in shape)

    def mesh_size(self) -> int:
        n = 1
        for d in self._dims:
            n *= d
        return n

    def dims(self) -> int:
        return len(self._dims)

    def __iter__(self) -> Iterator[int]:
        return iter(self._dims)

    def __getitem__(self, i: int) -> int:
        return self._dims[i]

    def __len__(self) -> int:
        return len(self._dims)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, MeshShape) and self._dims == other._dims

    def __hash__(self) -> int:
        return hash(self._dims)

    def __repr__(self) -> str:
        return f"MeshShape([{', '.join(map(str, self._dims))}])"


def padded_shape(shape: Shape, layout: Layout) -> Shape:
    """Shape as stored on device: TILE layout pads the last two dims to 32."""
    if layout != Layout.TILE:
        return shape
    dims = list(shape.to_rank(2)) if len(shape) < 2 else list(shape)
    dims[-1] = -(-dims[-1] // TILE_SIZE) * TILE_SIZE
    dims[-2] = -(-dims[-2] // TILE_SIZE) * TILE_SIZE
    return Shape(dims)


class CoreGrid(NotEmulatedAttributes):
    """A grid of worker cores (accepted by ops such as matmul; the emulator ignores it)."""

    __slots__ = ("x", "y")

    def __init__(self, *, x: int, y: int) -> None:
        self.x, self.y = x, y

    @property
    def num_cores(self) -> int:
        return self.x * self.y

    def __repr__(self) -> str:
        return f"ttnn.CoreGrid(x={self.x}, y={self.y})"
