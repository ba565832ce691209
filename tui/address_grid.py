"""The scaled memory map's data: a window of (address × seq) cells and what each one holds.

Rows are equal address steps (an address scale, bank-local), columns equal seq steps. Where a
cell covers many buffers it says how many rather than drawing each: the map of a million-event
session is as legible as that of ten events. The counts come from SQL aggregates
(`ttrecord.store.map_grid`); trace-owned ranges and hazards from the buffer list's layout
(`ttrecord.tui.memlayout.hazard_spans`) once it is loaded.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace

from ttrecord.store.map_grid import CellSpan

Span = tuple[int, int, int, int]  # address, end, first seq, last seq


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


@dataclass(frozen=True)
class View:
    """Which addresses and seqs the map shows, on how many rows and columns."""

    device: int
    buffer_type: str
    addr_lo: int
    addr_hi: int
    seq_lo: int
    seq_hi: int
    rows: int
    cols: int

    @property
    def addr_step(self) -> int:
        """Bytes per row: a power of two, so row labels are round addresses."""
        raw = max(1, _ceil_div(self.addr_hi - self.addr_lo, max(1, self.rows)))
        return 1 << (raw - 1).bit_length()

    @property
    def addr_base(self) -> int:
        """The first row's address: the window's start, down to a multiple of the step."""
        return self.addr_lo - self.addr_lo % self.addr_step

    @property
    def seq_step(self) -> int:
        return max(1, _ceil_div(self.seq_hi - self.seq_lo + 1, max(1, self.cols)))

    @property
    def used_cols(self) -> int:
        """Columns that hold seqs (fewer than `cols` when there are fewer seqs than columns)."""
        return min(self.cols, _ceil_div(self.seq_hi - self.seq_lo + 1, self.seq_step))

    def row_of(self, address: int) -> int:
        return (address - self.addr_base) // self.addr_step

    def col_of(self, seq: int) -> int:
        return (seq - self.seq_lo) // self.seq_step

    def row_range(self, row: int) -> tuple[int, int]:
        lo = self.addr_base + row * self.addr_step
        return lo, lo + self.addr_step

    def col_range(self, col: int) -> tuple[int, int]:
        lo = self.seq_lo + col * self.seq_step
        return lo, lo + self.seq_step - 1

    def sized(self, rows: int, cols: int) -> View:
        return replace(self, rows=max(1, rows), cols=max(1, cols))

    def zoom_addresses(self, factor: float, row: int, floor: int, ceiling: int) -> View:
        """Addresses `factor` times as many per row (< 1 zooms in), the cursor row's address
        kept where it is, within [floor, ceiling)."""
        center = self.row_range(row)[0]
        span = max(self.rows, int((self.addr_hi - self.addr_lo) * factor))
        if factor > 1 and span * 1.01 >= ceiling - floor:
            span = ceiling - floor
        span = min(span, max(ceiling - floor, self.rows))
        lo = center - int((center - self.addr_lo) * span / max(1, self.addr_hi - self.addr_lo))
        lo = max(floor, min(lo, ceiling - span))
        return replace(self, addr_lo=lo, addr_hi=lo + span)

    def zoom_seqs(self, factor: float, col: int, first: int, last: int) -> View:
        center = self.col_range(col)[0]
        span = max(self.cols, int((self.seq_hi - self.seq_lo + 1) * factor))
        if factor > 1 and span * 1.01 >= last - first + 1:
            span = last - first + 1  # zooming out lost the rounding of zooming in: all of it
        span = min(span, last - first + 1)
        lo = center - int((center - self.seq_lo) * span / max(1, self.seq_hi - self.seq_lo + 1))
        lo = max(first, min(lo, last - span + 1))
        return replace(self, seq_lo=lo, seq_hi=lo + span - 1)

    def pan_addresses(self, rows: int, floor: int, ceiling: int) -> View:
        span = self.addr_hi - self.addr_lo
        lo = max(floor, min(self.addr_lo + rows * self.addr_step, max(floor, ceiling - span)))
        return replace(self, addr_lo=lo, addr_hi=lo + span)

    def pan_seqs(self, cols: int, first: int, last: int) -> View:
        span = self.seq_hi - self.seq_lo + 1
        lo = max(first, min(self.seq_lo + cols * self.seq_step, max(first, last - span + 1)))
        return replace(self, seq_lo=lo, seq_hi=lo + span - 1)


@dataclass(frozen=True)
class Grid:
    view: View
    counts: list[list[int]]  # buffers per cell, by row then column
    captured: list[list[int]]  # of them, allocated inside a capture

    def cell(self, row: int, col: int) -> tuple[int, int]:
        return self.counts[row][col], self.captured[row][col]


def build_grid(view: View, spans: Iterable[CellSpan]) -> Grid:
    """Cells from SQL's bucket spans: a difference array per row, so a span costs its rows."""
    diff = [[0] * (view.cols + 1) for _ in range(view.rows)]
    diff_cap = [[0] * (view.cols + 1) for _ in range(view.rows)]
    for r0, r1, c0, c1, n, cap in spans:
        r0, r1 = max(0, int(r0)), min(view.rows - 1, int(r1))
        c0, c1 = max(0, int(c0)), min(view.cols - 1, int(c1))
        if r0 > r1 or c0 > c1:
            continue
        for r in range(r0, r1 + 1):
            diff[r][c0] += n
            diff[r][c1 + 1] -= n
            if cap:
                diff_cap[r][c0] += int(cap)
                diff_cap[r][c1 + 1] -= int(cap)
    return Grid(view, [_running(d)[:-1] for d in diff], [_running(d)[:-1] for d in diff_cap])


def _running(values: list[int]) -> list[int]:
    out, total = [], 0
    for v in values:
        total += v
        out.append(total)
    return out


def cells_of(view: View, spans: Iterable[Span]) -> list[list[bool]]:
    """Which cells of the view the address/seq spans cover: a difference array per row, so a
    thousand traces owning the same range cost a thousand row updates, not cell sets."""
    spans_as_cells = []
    for address, end, first, last in spans:
        if end <= view.addr_lo or address >= view.addr_hi or last < view.seq_lo or first > view.seq_hi:
            continue
        r0, r1 = max(0, view.row_of(address)), min(view.rows - 1, view.row_of(end - 1))
        c0, c1 = max(0, view.col_of(first)), min(view.cols - 1, view.col_of(last))
        spans_as_cells.append((r0, r1, c0, c1, 1, 0))
    return [[n > 0 for n in row] for row in build_grid(view, spans_as_cells).counts]
