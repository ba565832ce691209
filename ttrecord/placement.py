"""Where a sharded buffer lives: the cores (L1) or DRAM banks that hold its shards.

The allocator hands out one bank-local address range for every bank, so an interleaved buffer
(pages round-robin over all banks) and a sharded one both reserve `[address, end)` everywhere.
But a sharded buffer's shards sit only on the cores of its shard spec's grid (for DRAM
sharding the grid's x is the bank), and a captured op writes only those. A replay therefore
touches a buffer allocated at one of its addresses only where their banks meet: two sharded
buffers on disjoint cores at one L1 address do not overlap.

The recorder appends the grid to a tensor's memory-config text, `"L1 height_sharded on
(0,0)-(3,0)"` (ranges joined by `+`); `cores_of` reads it back. No grid (interleaved, or
unknown) means every bank: the overlap test then stays on addresses alone.
"""

from __future__ import annotations

import functools
import re
from typing import Any

Cores = frozenset[tuple[int, int]]

_MARK = " on ("
_RANGE = re.compile(r"\((\d+),(\d+)\)-\((\d+),(\d+)\)")
_MAX_CORES = 1 << 16  # a grid larger than any device's: text from a session is data


def grid_text(memory_config: Any) -> str | None:
    """`(x0,y0)-(x1,y1)+...` of a ttnn MemoryConfig's shard grid (ShardSpec, else NdShardSpec);
    None when it has none. Host-side metadata only."""
    for attr in ("shard_spec", "nd_shard_spec"):
        try:
            spec = getattr(memory_config, attr, None)
            if spec is None:
                continue
            ranges = spec.grid.ranges()
            return "+".join(f"({r.start.x},{r.start.y})-({r.end.x},{r.end.y})" for r in ranges) or None
        except Exception:  # a binding without these accessors: no placement, as before
            continue
    return None


@functools.lru_cache(maxsize=1024)
def cores_of(memory_config: str | None) -> Cores | None:
    """The cores a tensor's memory-config text places it on; None: every bank (or unknown)."""
    if not memory_config or _MARK not in memory_config:
        return None
    cores: set[tuple[int, int]] = set()
    for m in _RANGE.finditer(memory_config, memory_config.index(_MARK)):
        x0, y0, x1, y1 = map(int, m.groups())
        if (x1 - x0 + 1) * (y1 - y0 + 1) + len(cores) > _MAX_CORES:
            return None
        cores.update((x, y) for y in range(y0, y1 + 1) for x in range(x0, x1 + 1))
    return frozenset(cores) if cores else None


def placements_meet(a: Cores | None, b: Cores | None) -> bool:
    """Two buffers at overlapping addresses share memory only where their banks meet; None is
    every bank. The one placement test every overlap decision asks after the address test."""
    return a is None or b is None or not a.isdisjoint(b)


def describe(cores: Cores | None) -> str:
    """`cores (0,0)-(3,0)` style text for a message: the bounding box and the count."""
    if not cores:
        return "every bank"
    xs = [c[0] for c in cores]
    ys = [c[1] for c in cores]
    box = f"({min(xs)},{min(ys)})-({max(xs)},{max(ys)})"
    return f"{len(cores)} core(s) in {box}"
