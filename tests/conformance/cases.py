"""The vocabulary of the conformance corpus: memory configs, inputs and cases as plain data.

Importable by the real ttnn's lane python (no torch) and by the main suite alike: a case
names its inputs and calls the op through whatever `ttnn` the runner passes in, so the same
case runs on the real ttnn 0.81.1 (mock p150) and on the emulator.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, Optional


@dataclasses.dataclass(frozen=True)
class Mem:
    """A memory config: INTERLEAVED or a sharded layout, DRAM or L1, and a shard spec
    (`cores` as (x0, y0, x1, y1) rectangles) when sharded."""

    layout: str = "INTERLEAVED"
    buffer: str = "DRAM"
    cores: tuple[tuple[int, int, int, int], ...] = ()
    shard: tuple[int, int] = (0, 0)
    orientation: str = "ROW_MAJOR"

    def describe(self) -> str:
        if self.layout == "INTERLEAVED":
            return f"{self.buffer}"
        grid = "+".join(f"({a},{b})-({c},{d})" for a, b, c, d in self.cores)
        return f"{self.buffer} {self.layout.split('_')[0].lower()} {grid} {list(self.shard)}"


DRAM = Mem()
L1 = Mem(buffer="L1")


def height(cores: int, shard_h: int, width: int, buffer: str = "L1", per_row: int = 13) -> Mem:
    """Height sharding over the first `cores` cores of rows `per_row` wide (row-major order)."""
    return Mem("HEIGHT_SHARDED", buffer, _first_cores(cores, per_row), (shard_h, width))


def width(cores: int, rows: int, shard_w: int, buffer: str = "L1", per_row: int = 13) -> Mem:
    return Mem("WIDTH_SHARDED", buffer, _first_cores(cores, per_row), (rows, shard_w))


def block(cx: int, cy: int, shard_h: int, shard_w: int, buffer: str = "L1") -> Mem:
    return Mem("BLOCK_SHARDED", buffer, ((0, 0, cx - 1, cy - 1),), (shard_h, shard_w))


def dram_width(banks: int, rows: int, shard_w: int) -> Mem:
    """DRAM width sharding over the first `banks` DRAM banks (tt_transformers' DRAM-sharded
    weights)."""
    return Mem("WIDTH_SHARDED", "DRAM", ((0, 0, banks - 1, 0),), (rows, shard_w))


def _first_cores(n: int, per_row: int) -> tuple[tuple[int, int, int, int], ...]:
    full, rest = divmod(n, per_row)
    ranges = []
    if full:
        ranges.append((0, 0, per_row - 1, full - 1))
    if rest:
        ranges.append((0, full, rest - 1, full))
    return tuple(ranges)


@dataclasses.dataclass(frozen=True)
class In:
    """One input tensor: shape, ttnn dtype name, layout, where it lives, and its values
    (`randn`, `positive`, `unit` (in (0, 1)), `index:N` for integers in [0, N), `zeros`)."""

    shape: tuple[int, ...]
    dtype: str = "bfloat16"
    layout: str = "TILE"
    mem: Optional[Mem] = DRAM  # None: a host tensor
    values: str = "randn"

    def describe(self) -> str:
        where = "host" if self.mem is None else self.mem.describe()
        return f"{list(self.shape)} {self.dtype} {self.layout} {where}"


@dataclasses.dataclass(frozen=True)
class Case:
    """One call of one op. `call(ctx, *tensors)` runs it through `ctx.ttnn`; `ref(torch,
    *values)` is the torch reference for the emulator's numbers (None: not compared).
    `source` is the upstream tt-metal file the arguments come from."""

    op: str
    name: str
    inputs: tuple[In, ...]
    call: Callable[..., Any]
    source: str
    ref: Optional[Callable[..., Any]] = None
    tol: float = 0.03

    @property
    def key(self) -> str:
        return f"{self.op}/{self.name}"


class Context:
    """What a case's `call` needs: the ttnn module, the device, memory configs by value."""

    def __init__(self, ttnn: Any, device: Any) -> None:
        self.ttnn = ttnn
        self.device = device

    def mem(self, m: Mem) -> Any:
        ttnn = self.ttnn
        buffer = getattr(ttnn.BufferType, m.buffer)
        layout = getattr(ttnn.TensorMemoryLayout, m.layout)
        if m.layout == "INTERLEAVED":
            return ttnn.MemoryConfig(layout, buffer)
        grid = ttnn.CoreRangeSet({ttnn.CoreRange(ttnn.CoreCoord(a, b), ttnn.CoreCoord(c, d)) for a, b, c, d in m.cores})
        spec = ttnn.ShardSpec(grid, list(m.shard), getattr(ttnn.ShardOrientation, m.orientation))
        return ttnn.MemoryConfig(layout, buffer, spec)

    def dtype(self, name: str) -> Any:
        return getattr(self.ttnn, name)

    @property
    def TILE(self) -> Any:  # noqa: N802 - ttnn's name
        return self.ttnn.TILE_LAYOUT

    @property
    def ROW_MAJOR(self) -> Any:  # noqa: N802 - ttnn's name
        return self.ttnn.ROW_MAJOR_LAYOUT
