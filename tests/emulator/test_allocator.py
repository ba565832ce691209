"""The bank-local allocator: alignment, first fit, reuse of freed blocks, L1 top-down."""

from __future__ import annotations

import pytest

from ttrecord.emulator.allocator import BankAllocator, OutOfMemoryError, size_per_bank


def test_sizes_are_rounded_up_to_the_alignment():
    """GIVEN 64-byte alignment WHEN 100 bytes are allocated THEN the next block starts 128 bytes later."""
    alloc = BankAllocator("DRAM", 1000, 100_000, 64, top_down=False)
    a = alloc.allocate(100)
    b = alloc.allocate(1)
    assert (a, b) == (1000, 1128)


def test_bottom_up_first_fit_reuses_the_lowest_hole_that_fits():
    """GIVEN holes of 128 and 256 bytes WHEN 200 bytes are requested THEN the 256 hole (the first that fits) is used."""
    alloc = BankAllocator("DRAM", 0, 10_000, 64, top_down=False)
    blocks = [alloc.allocate(size) for size in (128, 64, 256, 64)]
    alloc.free(blocks[0])
    alloc.free(blocks[2])
    assert alloc.allocate(200) == blocks[2]
    assert alloc.allocate(64) == blocks[0]


def test_freed_neighbours_merge_into_one_block():
    """GIVEN three adjacent blocks WHEN all are freed THEN one allocation of their total size lands at the first."""
    alloc = BankAllocator("DRAM", 0, 384, 64, top_down=False)
    blocks = [alloc.allocate(128) for _ in range(3)]
    for b in (blocks[1], blocks[0], blocks[2]):
        alloc.free(b)
    assert alloc.free_blocks() == [(0, 384)]
    assert alloc.allocate(384) == 0


def test_top_down_allocates_from_the_highest_free_address():
    """GIVEN an L1-style allocator WHEN blocks are allocated THEN they descend from the top; a freed high block is reused first."""
    alloc = BankAllocator("L1", 1024, 5120, 16, top_down=True)
    a = alloc.allocate(1024)
    b = alloc.allocate(1024)
    assert (a, b) == (4096, 3072)
    alloc.free(a)
    assert alloc.allocate(512) == 4608


def test_allocation_fails_when_nothing_fits():
    """GIVEN a full range THEN the next allocation raises an out-of-memory error."""
    alloc = BankAllocator("L1", 0, 256, 16, top_down=True)
    alloc.allocate(256)
    with pytest.raises(OutOfMemoryError):
        alloc.allocate(16)


@pytest.mark.parametrize(
    "pages,page,banks,expected",
    [(1, 2048, 8, 2048), (8, 2048, 8, 2048), (9, 2048, 8, 4096), (64, 2048, 8, 16384), (1024, 2048, 8, 262144), (4, 2048, 130, 2048)],
)
def test_interleaved_buffers_reserve_ceil_pages_over_banks_per_bank(pages, page, banks, expected):
    """An interleaved buffer reserves ceil(pages / banks) × page size in every bank."""
    assert size_per_bank(pages, page, banks, 64) == expected
