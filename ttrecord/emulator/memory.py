"""Byte-addressed device memory, one array row per bank.

Page `i` of an interleaved buffer lives in bank `i % banks` at
`base + (i // banks) × aligned_page_size`. Reading or writing a tensor moves the
bytes of exactly those pages, so two buffers whose bank-local ranges overlap
really see each other's data, and a trace replay writing at a captured address
really lands in whatever buffer holds that address now.

Storage is a numpy uint8 array of shape (banks, capacity) covering
[base, base + capacity); it grows on demand. np.zeros is calloc-backed, so
untouched pages cost no RAM. What is allocated top-down at the far end of a bank
(kernel binaries under the DRAM trace region, 4 GB up) lives in a second array
that grows downwards from `limit`, so a few KB there do not cost gigabytes; the
two become one array only if they meet.
"""

from __future__ import annotations

import threading

import numpy as np


class BankedMemory:
    """The bytes of one buffer type (DRAM or L1) across all its banks."""

    def __init__(self, num_banks: int, base: int, limit: int) -> None:
        self.num_banks = num_banks
        self.base = base
        self.limit = limit
        self._data = np.zeros((num_banks, 0), dtype=np.uint8)
        self._high = np.zeros((num_banks, 0), dtype=np.uint8)  # covers [limit - width, limit)
        # Growing replaces `_data`: a write through a view taken before that would be lost, so
        # taking a view and using it is one step under this lock (threads share a device).
        self._lock = threading.Lock()

    def _ensure(self, end: int) -> None:
        needed = end - self.base
        capacity = self._data.shape[1]
        if needed <= capacity:
            return
        new_capacity = max(needed, 2 * capacity, 1 << 16)
        top = self._high_start() if self._high.shape[1] else self.limit  # never into the high array
        new_capacity = min(max(new_capacity, needed), max(top - self.base, needed))
        grown = np.zeros((self.num_banks, new_capacity), dtype=np.uint8)
        if capacity:
            grown[:, :capacity] = self._data
        self._data = grown

    def _high_start(self) -> int:
        return self.limit - self._high.shape[1]

    def _view(self, address: int, end: int) -> np.ndarray:
        """The (banks, end - address) bytes of [address, end): from the low array, or from the
        high one when the range is nearer the top and clear of the low array."""
        low_end = self.base + self._data.shape[1]
        if end <= low_end:
            return self._data[:, address - self.base : end - self.base]
        high = self._high_start()
        if address >= high and end <= self.limit:
            return self._high[:, address - high : end - high]
        if end <= self.limit and address - self.base > self.limit - end and address >= low_end + (1 << 20):
            width = max(self.limit - address, 2 * self._high.shape[1], 1 << 16)
            width = min(width, self.limit - low_end)
            grown = np.zeros((self.num_banks, width), dtype=np.uint8)
            if self._high.shape[1]:
                grown[:, width - self._high.shape[1] :] = self._high
            self._high = grown
            high = self._high_start()
            return self._high[:, address - high : end - high]
        if self._high.shape[1] and end > high:  # the two meet: one array from base up
            self._ensure(self.limit)
            self._data[:, high - self.base : self.limit - self.base] = self._high
            self._high = np.zeros((self.num_banks, 0), dtype=np.uint8)
        self._ensure(end)
        return self._data[:, address - self.base : end - self.base]

    def _region(self, address: int, num_pages: int, page_size: int) -> np.ndarray:
        """A (banks, rows, page_size) view of a buffer's per-bank reservation."""
        rows = -(-num_pages // self.num_banks)
        region = self._view(address, address + rows * page_size)
        return region.reshape(self.num_banks, rows, page_size)

    def read_pages(self, address: int, num_pages: int, page_size: int) -> np.ndarray:
        with self._lock:
            return self._read_pages(address, num_pages, page_size)

    def _read_pages(self, address: int, num_pages: int, page_size: int) -> np.ndarray:
        """Copy of the buffer's pages, shape (num_pages, page_size), in page order."""
        banks = self.num_banks
        region = self._region(address, num_pages, page_size)
        if num_pages <= banks:
            return region[:num_pages, 0, :].copy()
        ordered = region.transpose(1, 0, 2).reshape(-1, page_size)
        return ordered[:num_pages]

    def write_pages(self, address: int, pages: np.ndarray) -> None:
        with self._lock:
            return self._write_pages(address, pages)

    def _write_pages(self, address: int, pages: np.ndarray) -> None:
        """Store `pages` (shape (num_pages, page_size)) at the buffer's page slots."""
        num_pages, page_size = pages.shape
        banks = self.num_banks
        region = self._region(address, num_pages, page_size)
        if num_pages <= banks:
            region[:num_pages, 0, :] = pages
            return
        full_rows, rest = divmod(num_pages, banks)
        if full_rows:
            head = pages[: full_rows * banks].reshape(full_rows, banks, page_size)
            region[:, :full_rows, :] = head.transpose(1, 0, 2)
        if rest:
            region[:rest, full_rows, :] = pages[full_rows * banks :]

    def read_placed(self, address: int, banks: np.ndarray, slots: np.ndarray, page_size: int) -> np.ndarray:
        with self._lock:
            return self._read_placed(address, banks, slots, page_size)

    def _read_placed(self, address: int, banks: np.ndarray, slots: np.ndarray, page_size: int) -> np.ndarray:
        """Pages of a sharded buffer: page i at bank banks[i], address + slots[i] × page_size."""
        rows = int(slots.max()) + 1 if len(slots) else 1
        region = self._region(address, rows * self.num_banks, page_size)
        return region[banks, slots]

    def write_placed(self, address: int, banks: np.ndarray, slots: np.ndarray, pages: np.ndarray) -> None:
        with self._lock:
            return self._write_placed(address, banks, slots, pages)

    def _write_placed(self, address: int, banks: np.ndarray, slots: np.ndarray, pages: np.ndarray) -> None:
        page_size = pages.shape[1]
        rows = int(slots.max()) + 1 if len(slots) else 1
        region = self._region(address, rows * self.num_banks, page_size)
        region[banks, slots] = pages

    def bank_bytes(self, bank: int, address: int, size: int) -> np.ndarray:
        """Raw bytes of one bank, for tests and debugging."""
        with self._lock:
            return self._view(address, address + size)[bank].copy()
