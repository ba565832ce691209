"""A bank-local first-fit allocator, as tt-metal's free-list allocator behaves.

An interleaved buffer has the same base address in every bank and reserves
`ceil(pages / banks) × aligned_page_size` bytes per bank, so one allocator per
buffer type manages a single bank-local address range. DRAM is handed out
bottom-up (lowest free address first), L1 top-down (highest free address
first). Freed blocks merge with free neighbours and are reused by the next
allocation that fits, which is exactly what makes trace replay overwrite
buffers allocated after capture.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable
from typing import Optional


def round_up(value: int, multiple: int) -> int:
    return -(-value // multiple) * multiple


def size_per_bank(num_pages: int, aligned_page_size: int, num_banks: int, alignment: int) -> int:
    """Bytes one interleaved buffer reserves in each bank."""
    pages_per_bank = -(-num_pages // num_banks)
    return round_up(max(pages_per_bank, 1) * aligned_page_size, alignment)


class OutOfMemoryError(RuntimeError):
    pass


class BankAllocator:
    """First-fit allocator over the bank-local range [start, end)."""

    def __init__(self, name: str, start: int, end: int, alignment: int, top_down: bool) -> None:
        if end < start:
            end = start
        self.name = name
        self.start = start
        self.end = end
        self.alignment = alignment
        self.top_down = top_down
        # Free blocks as sorted parallel lists of start addresses and sizes.
        self._free_starts: list[int] = [start] if end > start else []
        self._free_sizes: list[int] = [end - start] if end > start else []
        self.allocated: dict[int, int] = {}

    def allocate(self, size: int, top_down: Optional[bool] = None) -> int:
        """Reserve `size` bytes (rounded to the alignment) and return the address;
        `top_down` overrides the allocator's direction for this one allocation."""
        size = round_up(max(size, 1), self.alignment)
        from_top = self.top_down if top_down is None else top_down
        indices: Iterable[int] = range(len(self._free_starts))
        if from_top:
            indices = reversed(range(len(self._free_starts)))
        for i in indices:
            block_start, block_size = self._free_starts[i], self._free_sizes[i]
            if block_size < size:
                continue
            if from_top:
                address = block_start + block_size - size
                if block_size == size:
                    del self._free_starts[i], self._free_sizes[i]
                else:
                    self._free_sizes[i] = block_size - size
            else:
                address = block_start
                if block_size == size:
                    del self._free_starts[i], self._free_sizes[i]
                else:
                    self._free_starts[i] = block_start + size
                    self._free_sizes[i] = block_size - size
            self.allocated[address] = size
            return address
        raise OutOfMemoryError(
            "TT_FATAL @ tt_metal/impl/allocator/bank_manager.cpp:0: address.has_value()\ninfo:\n"
            f"Out of Memory: Not enough space to allocate {size} B {self.name} buffer per bank "
            f"(free blocks: {self.free_blocks()[:4]}{'...' if len(self._free_starts) > 4 else ''})"
        )

    def free(self, address: int) -> int:
        """Return the block at `address` to the free list, merging neighbours."""
        size = self.allocated.pop(address)
        i = bisect.bisect_left(self._free_starts, address)
        self._free_starts.insert(i, address)
        self._free_sizes.insert(i, size)
        # merge with next
        if i + 1 < len(self._free_starts) and address + size == self._free_starts[i + 1]:
            self._free_sizes[i] += self._free_sizes[i + 1]
            del self._free_starts[i + 1], self._free_sizes[i + 1]
        # merge with previous
        if i > 0 and self._free_starts[i - 1] + self._free_sizes[i - 1] == address:
            self._free_sizes[i - 1] += self._free_sizes[i]
            del self._free_starts[i], self._free_sizes[i]
        return size

    def size_of(self, address: int) -> Optional[int]:
        return self.allocated.get(address)

    def free_blocks(self) -> list[tuple[int, int]]:
        return list(zip(self._free_starts, self._free_sizes))
