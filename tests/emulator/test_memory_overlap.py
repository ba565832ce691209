"""Device memory is byte-addressed per bank: overlapping buffers see each other's bytes."""

from __future__ import annotations

import numpy as np
import torch

from ttrecord import emulator as ttnn
from ttrecord.emulator.memory import BankedMemory


def test_page_i_lives_in_bank_i_mod_banks_at_base_plus_row_offset():
    """GIVEN 8 banks WHEN 10 pages are written at base B THEN page 9 is in bank 1 at B + page_size."""
    memory = BankedMemory(num_banks=8, base=1000, limit=1 << 20)
    pages = np.arange(10, dtype=np.uint8).repeat(64).reshape(10, 64)
    memory.write_pages(1024, pages)
    assert memory.bank_bytes(1, 1024 + 64, 64).tolist() == [9] * 64
    assert memory.bank_bytes(1, 1024, 64).tolist() == [1] * 64
    assert memory.bank_bytes(2, 1024 + 64, 64).tolist() == [0] * 64  # slot reserved, never written
    assert np.array_equal(memory.read_pages(1024, 10, 64), pages)


def test_overlapping_ranges_alias_through_memory():
    """GIVEN a 16-page buffer at A WHEN a 1-page buffer is written at A + page_size
    THEN the big buffer's page 8 (bank 0, second row) holds the new bytes."""
    memory = BankedMemory(num_banks=8, base=0, limit=1 << 20)
    memory.write_pages(4096, np.zeros((16, 32), dtype=np.uint8))
    memory.write_pages(4096 + 32, np.full((1, 32), 7, dtype=np.uint8))
    big = memory.read_pages(4096, 16, 32)
    assert big[8].tolist() == [7] * 32
    assert int(big.sum()) == 7 * 32


def test_a_tensor_reallocated_on_a_freed_address_reads_the_old_bytes(device):
    """GIVEN a tensor freed without being overwritten WHEN an unwritten tensor of the same
    size is allocated THEN it lands on the same address and reads the old values."""
    old = ttnn.from_torch(torch.full((32, 32), 42.0), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    address = old.buffer_address()
    del old
    new = ttnn.allocate_tensor_on_device(ttnn.Shape([32, 32]), ttnn.bfloat16, ttnn.TILE_LAYOUT, device)
    assert new.buffer_address() == address
    assert torch.all(ttnn.to_torch(new) == 42.0)


def test_different_layouts_over_the_same_bytes_reinterpret_them(device):
    """GIVEN float32 values written as ROW_MAJOR WHEN a float32 TILE tensor reuses the address
    THEN it reads the same bytes in tile order, not the original values."""
    data = torch.arange(32 * 32, dtype=torch.float32).reshape(32, 32)
    rm = ttnn.from_torch(data, dtype=ttnn.float32, layout=ttnn.ROW_MAJOR_LAYOUT, device=device)
    address = rm.buffer_address()
    del rm
    tiled = ttnn.allocate_tensor_on_device([32, 32], ttnn.float32, ttnn.TILE_LAYOUT, device)
    assert tiled.buffer_address() == address
    values = ttnn.to_torch(tiled)
    # 32 rows of 128 bytes, round-robin over 8 banks: bank 0 holds rows 0, 8, 16, 24
    # back to back, and the single 4096-byte tile page lives in bank 0.
    assert values[0, 0].item() == 0.0
    assert values[1, 0].item() == 8 * 32
    assert not torch.equal(values, data)
