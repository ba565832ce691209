"""Sharded memory: core coordinates, shard specs, and where each page of a sharded buffer lives.

A sharded buffer is allocated like an interleaved one (same allocator, same direction, one
base address in every bank) but reserves `pages per shard × aligned page` per bank and puts
each shard on one core (L1) or DRAM bank. Measured on ttnn 0.81.1 (mock p150,
tests/realttnn/scripts/sharded_sequence.py):

* TILE pages are tiles numbered row-major over the tensor's 2-D view [prod(dims[:-1]), W];
  tile (r, c) belongs to shard (r // shard_tiles_h, c // shard_tiles_w) at local index
  (r % shard_tiles_h) × shard_tiles_w + c % shard_tiles_w.
* ROW_MAJOR pages are shard-wide row pieces (page size = shard width × element size), so a
  width-sharded row-major tensor has W / shard_w pages per row.
* HEIGHT/WIDTH sharding give shard i to the i-th core of the grid (ROW_MAJOR orientation:
  x fastest; COL_MAJOR: y fastest); BLOCK sharding puts shard (r, c) on core
  (x0 + c, y0 + r) (ROW_MAJOR) or (x0 + r, y0 + c) (COL_MAJOR).
* L1 bank k of an interleaved buffer is the k-th core of `DeviceConfig.l1_bank_cores`, so an
  interleaved and a sharded buffer overlap exactly on the cores both really touch.
"""

from __future__ import annotations

from .errors import NotEmulatedAttributes, NotEmulatedEnumType

import enum
import functools
from typing import Any, Optional
from collections.abc import Iterable, Iterator, Sequence

import numpy as np

from .allocator import round_up
from .types import TILE_SIZE, BufferType, Layout, Shape, TensorMemoryLayout, element_size, padded_shape


class ShardOrientation(enum.Enum, metaclass=NotEmulatedEnumType):
    ROW_MAJOR = 0
    COL_MAJOR = 1


class ShardStrategy(enum.Enum, metaclass=NotEmulatedEnumType):
    HEIGHT = 0
    WIDTH = 1
    BLOCK = 2


class ShardDistributionStrategy(enum.Enum, metaclass=NotEmulatedEnumType):
    ROUND_ROBIN_1D = 0
    GRID_2D = 1


class CoreCoord(NotEmulatedAttributes):
    """A core's logical (x, y); prints as ttnn's does (`1-2`)."""

    __slots__ = ("x", "y")

    def __init__(self, x: Any, y: Optional[int] = None) -> None:
        if y is None:  # CoreCoord((x, y)) as nanobind accepts
            x, y = x
        self.x, self.y = int(x), int(y)

    def __repr__(self) -> str:
        return f"{self.x}-{self.y}"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, tuple):
            return (self.x, self.y) == other
        return isinstance(other, CoreCoord) and (self.x, self.y) == (other.x, other.y)

    def __hash__(self) -> int:
        return hash((self.x, self.y))

    def __iter__(self) -> Iterator[int]:
        return iter((self.x, self.y))


def _coord(value: Any) -> CoreCoord:
    return value if isinstance(value, CoreCoord) else CoreCoord(value)


class CoreRange(NotEmulatedAttributes):
    """The rectangle of cores from `start` to `end`, inclusive."""

    __slots__ = ("start", "end")

    def __init__(self, start: Any, end: Any) -> None:
        self.start, self.end = _coord(start), _coord(end)
        if self.end.x < self.start.x or self.end.y < self.start.y:
            raise RuntimeError(f"TT_FATAL: Invalid core range for start: {self.start}, end: {self.end}")

    def grid_size(self) -> CoreCoord:
        return CoreCoord(self.end.x - self.start.x + 1, self.end.y - self.start.y + 1)

    def num_cores(self) -> int:
        size = self.grid_size()
        return size.x * size.y

    def contains(self, core: Any = None, core_range: Any = None, core_range_set: Any = None) -> bool:
        """Whether a core, or every core of a CoreRange / CoreRangeSet, lies in this range."""
        target = next(t for t in (core, core_range, core_range_set) if t is not None)
        if isinstance(target, (CoreRange, CoreRangeSet)):
            return all(self.contains(c) for c in target.cores())
        c = _coord(target)
        return self.start.x <= c.x <= self.end.x and self.start.y <= c.y <= self.end.y

    def cores(self, row_major: bool = True) -> list[tuple[int, int]]:
        xs = range(self.start.x, self.end.x + 1)
        ys = range(self.start.y, self.end.y + 1)
        if row_major:
            return [(x, y) for y in ys for x in xs]
        return [(x, y) for x in xs for y in ys]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CoreRange) and (self.start, self.end) == (other.start, other.end)

    def __hash__(self) -> int:
        return hash((self.start, self.end))

    def __repr__(self) -> str:
        return f"[{self.start!r} - {self.end!r}]"


class CoreRangeSet(NotEmulatedAttributes):
    """A set of core ranges (the grid a sharded tensor lives on)."""

    __slots__ = ("_ranges",)

    def __init__(self, core_ranges: Iterable[CoreRange] = ()) -> None:
        ranges = [core_ranges] if isinstance(core_ranges, CoreRange) else list(core_ranges)
        self._ranges = tuple(sorted(ranges, key=lambda r: (r.start.y, r.start.x)))

    def ranges(self) -> list[CoreRange]:
        return list(self._ranges)

    def num_cores(self) -> int:
        return sum(r.num_cores() for r in self._ranges)

    def bounding_box(self) -> CoreRange:
        return CoreRange(
            CoreCoord(min(r.start.x for r in self._ranges), min(r.start.y for r in self._ranges)),
            CoreCoord(max(r.end.x for r in self._ranges), max(r.end.y for r in self._ranges)),
        )

    def contains(self, core: Any = None, core_range: Any = None, core_range_set: Any = None) -> bool:
        """Whether a core, or every core of a CoreRange / CoreRangeSet, lies in this set."""
        target = next(t for t in (core, core_range, core_range_set) if t is not None)
        if isinstance(target, (CoreRange, CoreRangeSet)):
            return all(self.contains(c) for c in target.cores())
        return any(r.contains(target) for r in self._ranges)

    def cores(self, row_major: bool = True) -> list[tuple[int, int]]:
        return [c for r in self._ranges for c in r.cores(row_major)]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CoreRangeSet) and self._ranges == other._ranges

    def __hash__(self) -> int:
        return hash(self._ranges)

    def __repr__(self) -> str:
        return "{" + ", ".join(map(repr, self._ranges)) + "}"


def num_cores_to_corerangeset(target_num_cores: int, grid_size: Any, row_wise: bool = False) -> CoreRangeSet:
    """The first `target_num_cores` cores of a grid, as full rows (or columns) plus a remainder."""
    gx, gy = tuple(_coord(grid_size))
    ranges = []
    if row_wise:
        full, rest = divmod(target_num_cores, gx)
        if full:
            ranges.append(CoreRange((0, 0), (gx - 1, full - 1)))
        if rest:
            ranges.append(CoreRange((0, full), (rest - 1, full)))
    else:
        full, rest = divmod(target_num_cores, gy)
        if full:
            ranges.append(CoreRange((0, 0), (full - 1, gy - 1)))
        if rest:
            ranges.append(CoreRange((full, 0), (full, rest - 1)))
    return CoreRangeSet(ranges)


class ShardSpec(NotEmulatedAttributes):
    """Which cores hold the shards, each shard's [height, width], and the core order."""

    __slots__ = ("grid", "shape", "orientation")

    def __init__(
        self,
        grid: CoreRangeSet,
        shard_shape: Sequence[int],
        shard_orientation: ShardOrientation = ShardOrientation.ROW_MAJOR,
    ) -> None:
        self.grid = grid if isinstance(grid, CoreRangeSet) else CoreRangeSet(grid)
        self.shape = [int(d) for d in shard_shape]
        self.orientation = shard_orientation

    def num_cores(self) -> int:
        return self.grid.num_cores()

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, ShardSpec)
            and self.grid == other.grid
            and self.shape == other.shape
            and self.orientation == other.orientation
        )

    def __hash__(self) -> int:
        return hash((self.grid, tuple(self.shape), self.orientation))

    def __repr__(self) -> str:
        grid = ",".join(
            f'{{"start":{{"x":{r.start.x},"y":{r.start.y}}},"end":{{"x":{r.end.x},"y":{r.end.y}}}}}'
            for r in self.grid.ranges()
        )
        return f"ShardSpec{{grid=[{grid}], shape={self.shape}, orientation=ShardOrientation::{self.orientation.name}}}"


class Placement:
    """Where every page of one sharded buffer is: bank (row of device memory) and slot.

    Compared by identity: two placements are the same only when they are the same object.
    """

    __slots__ = ("banks", "slots", "pages_per_shard", "row_split", "cores", "memory_layout")

    def __init__(
        self,
        banks: np.ndarray,
        slots: np.ndarray,
        pages_per_shard: int,
        row_split: int,
        cores: tuple,
        memory_layout: TensorMemoryLayout,
    ) -> None:
        self.banks = banks  # per page: bank index in the device memory
        self.slots = slots  # per page: index of its slot in the bank (address + slot × page)
        self.pages_per_shard = pages_per_shard
        self.row_split = row_split  # ROW_MAJOR: pages per tensor row (width sharding)
        self.cores = cores  # per page: (x, y) of its core
        self.memory_layout = memory_layout

    def __repr__(self) -> str:
        return f"Placement({len(self.banks)} pages, {self.pages_per_shard} per shard)"


def _fatal(message: str) -> RuntimeError:
    return RuntimeError(f"TT_FATAL @ ttnn/core/tensor/tensor_spec.cpp:0: shard_spec\ninfo:\n{message}")


def _shard_cores(layout: TensorMemoryLayout, spec: ShardSpec, num_shards_h: int, num_shards_w: int) -> list[list[tuple[int, int]]]:
    """cores[shard_row][shard_col] for a sharded layout."""
    row_major = spec.orientation == ShardOrientation.ROW_MAJOR
    if layout == TensorMemoryLayout.BLOCK_SHARDED:
        box = spec.grid.bounding_box()
        x0, y0 = box.start.x, box.start.y
        if row_major:
            return [[(x0 + c, y0 + r) for c in range(num_shards_w)] for r in range(num_shards_h)]
        return [[(x0 + r, y0 + c) for c in range(num_shards_w)] for r in range(num_shards_h)]
    cores = spec.grid.cores(row_major)
    needed = num_shards_h * num_shards_w
    if needed > len(cores):
        raise _fatal(f"Number of shards along the sharded dimension ({needed}) exceeds the number of cores ({len(cores)})")
    if layout == TensorMemoryLayout.HEIGHT_SHARDED:
        return [[cores[r]] for r in range(num_shards_h)]
    return [[cores[c] for c in range(num_shards_w)]]


@functools.lru_cache(maxsize=1024)
def placement(
    shape: Shape,
    dtype: Any,
    layout: Layout,
    memory_layout: TensorMemoryLayout,
    buffer_type: BufferType,
    spec: ShardSpec,
    config: Any,
) -> tuple[Placement, int, int]:
    """(placement, page_size, num_pages) of a sharded tensor on a chip of `config`."""
    bank_of_core = config.l1_bank_of_core if buffer_type == BufferType.L1 else config.dram_bank_of_core
    dims: Shape | tuple[int, ...] = padded_shape(shape, layout) if layout == Layout.TILE else shape
    dims = tuple(dims) if len(dims) else (1,)
    width = dims[-1]
    height = 1
    for d in dims[:-1]:
        height *= d
    shard_h, shard_w = spec.shape
    if memory_layout == TensorMemoryLayout.HEIGHT_SHARDED and shard_w != width:
        raise _fatal(f"Shard width {shard_w} must match physical width {width} for height sharded")
    if memory_layout == TensorMemoryLayout.WIDTH_SHARDED and shard_h != height:
        raise _fatal(f"Shard height {shard_h} must match physical height {height} for width sharded")
    esize = element_size(dtype)
    if layout == Layout.TILE:
        if shard_h % TILE_SIZE or shard_w % TILE_SIZE:
            raise _fatal(f"Shard shape {spec.shape} must be a multiple of the tile shape for TILE layout")
        unit_h, unit_w = shard_h // TILE_SIZE, shard_w // TILE_SIZE
        rows, cols = height // TILE_SIZE, width // TILE_SIZE
        from .codec import geometry

        page_size = geometry(shape, dtype, layout).page_size
        row_split = 1
    else:
        if width % shard_w:
            raise _fatal(f"ttnn emulator: row-major width {width} not divisible by shard width {shard_w} is not emulated")
        unit_h, unit_w = shard_h, 1
        rows, cols = height, width // shard_w
        page_size = shard_w * esize
        row_split = cols
    num_shards_h, num_shards_w = -(-rows // unit_h), -(-cols // unit_w)
    core_grid = _shard_cores(memory_layout, spec, num_shards_h, num_shards_w)
    r = np.arange(rows).repeat(cols)
    c = np.tile(np.arange(cols), rows)
    shard_r, shard_c = r // unit_h, c // unit_w
    slots = (r % unit_h) * unit_w + (c % unit_w)
    core_of_shard = [[core_grid[i][j] for j in range(num_shards_w)] for i in range(num_shards_h)]
    try:
        bank_table = np.array(
            [[bank_of_core(core) for core in row] for row in core_of_shard], dtype=np.int64
        )
    except KeyError as e:
        raise _fatal(f"core {e.args[0]} is outside the device's {buffer_type.name} grid") from None
    banks = bank_table[shard_r, shard_c]
    cores = tuple(core_of_shard[i][j] for i, j in zip(shard_r.tolist(), shard_c.tolist()))
    return Placement(banks, slots, unit_h * unit_w, row_split, cores, memory_layout), page_size, rows * cols


def size_per_bank(place: Placement, aligned_page_size: int, alignment: int) -> int:
    return round_up(place.pages_per_shard * aligned_page_size, alignment)


def _largest_divisor(n: int, limit: int) -> int:
    for d in range(min(n, limit), 0, -1):
        if n % d == 0:
            return d
    return 1


def default_shard_spec(shape: Shape, layout: Layout, memory_layout: TensorMemoryLayout, config: Any) -> ShardSpec:
    """A shard spec for a sharded memory config given without one (ttnn's
    L1_*_SHARDED_MEMORY_CONFIG constants, whose spec an op derives from its program config).

    The emulator's choice, documented in docs/emulator.md: as many cores of the compute grid
    as divide the tensor's tile rows (height), tile columns (width) or both (block).
    """
    dims: Shape | tuple[int, ...] = padded_shape(shape, layout) if layout == Layout.TILE else shape
    dims = tuple(dims) if len(dims) else (1,)
    width, height = dims[-1], 1
    for d in dims[:-1]:
        height *= d
    unit = TILE_SIZE if layout == Layout.TILE else 1
    unit_w = TILE_SIZE if layout == Layout.TILE else width
    gx, gy = config.compute_grid
    if memory_layout == TensorMemoryLayout.HEIGHT_SHARDED:
        n = _largest_divisor(height // unit, gx * gy)
        grid = num_cores_to_corerangeset(n, (gx, gy), row_wise=True)
        return ShardSpec(grid, [height // n, width], ShardOrientation.ROW_MAJOR)
    if memory_layout == TensorMemoryLayout.WIDTH_SHARDED:
        n = _largest_divisor(width // unit_w, gx * gy) if layout == Layout.TILE else 1
        grid = num_cores_to_corerangeset(n, (gx, gy), row_wise=True)
        return ShardSpec(grid, [height, width // n], ShardOrientation.ROW_MAJOR)
    ny = _largest_divisor(height // unit, gy)
    nx = _largest_divisor(width // unit_w, gx) if layout == Layout.TILE else 1
    grid = CoreRangeSet([CoreRange((0, 0), (nx - 1, ny - 1))])
    return ShardSpec(grid, [height // ny, width // nx], ShardOrientation.ROW_MAJOR)
