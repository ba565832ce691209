"""The default device reproduces the real allocator's addresses measured on a
mock p150 with ttnn 0.81.1 (shared/notes/real-ttnn-mock-device.md)."""

from __future__ import annotations

import gc

import numpy as np

from ttrecord import emulator as ttnn


def _tensor(device, shape, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, memory_config=ttnn.DRAM_MEMORY_CONFIG):
    return ttnn.Tensor(np.zeros(shape, dtype=np.float32), dtype, device, layout, memory_config)


def test_measured_p150_address_sequence_is_reproduced(device):
    """GIVEN a fresh p150 WHEN the measured allocation sequence is replayed
    THEN every buffer_address() equals the address real ttnn returned."""
    dram = ttnn.DRAM_MEMORY_CONFIG
    l1 = ttnn.L1_MEMORY_CONFIG
    live = {}
    steps = [
        ("a", (32, 32), dram, 1048704),
        ("b", (32, 32), dram, 1050752),
        ("c", (64, 64), dram, 1052800),
        ("d", (256, 256), dram, 1054848),
        ("e", (32, 32), dram, 1071232),
        ("f", (1024, 1024), dram, 1073280),
        ("g", (32, 32), dram, 1335424),
        ("h", (32, 32), l1, 1570816),
        ("i", (64, 64), l1, 1568768),
        ("j", (32, 32), l1, 1566720),
    ]
    for name, shape, memory_config, expected in steps:
        live[name] = _tensor(device, shape, memory_config=memory_config)
        assert live[name].buffer_address() == expected, name

    del live["c"]
    gc.collect()
    again = _tensor(device, (64, 64))
    assert again.buffer_address() == 1052800  # the freed address, reused

    row_major = _tensor(device, (32, 64), layout=ttnn.ROW_MAJOR_LAYOUT)
    f32 = _tensor(device, (32, 32), dtype=ttnn.float32)
    after = _tensor(device, (32, 32))
    assert f32.buffer_address() - row_major.buffer_address() == 512
    assert after.buffer_address() - f32.buffer_address() == 4096


def test_page_metadata_matches_real_ttnn(device):
    """GIVEN a 256×256 bf16 TILE tensor THEN it has 64 pages of 2048 bytes (aligned 2048)."""
    t = _tensor(device, (256, 256))
    assert (t.buffer_num_pages(), t.buffer_page_size(), t.buffer_aligned_page_size()) == (64, 2048, 2048)
    assert t.element_size() == 2 and t.volume() == 65536 and t.logical_volume() == 65536
    assert t.memory_config().buffer_type == ttnn.BufferType.DRAM
    assert t.memory_config().memory_layout == ttnn.TensorMemoryLayout.INTERLEAVED
    assert t.storage_type() == ttnn.StorageType.DEVICE
