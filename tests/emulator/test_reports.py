"""`ttnn._ttnn.reports`: the allocator's view, as real ttnn reports it."""

from __future__ import annotations

import gc

from ttrecord import emulator as ttnn


def test_get_buffers_lists_every_live_buffer_with_its_bank_local_footprint(device, tile):
    """GIVEN three tensors (DRAM 1 tile, DRAM 64 tiles, L1 1 tile) THEN get_buffers reports
    (address, max_size_per_bank, buffer_type) for each, and a dropped one disappears."""
    import torch

    a = tile(device, 1.0)
    b = tile(device, torch.zeros(256, 256))
    c = tile(device, 1.0, memory_config=ttnn.L1_MEMORY_CONFIG)
    got = {(i.address, i.max_size_per_bank, i.buffer_type) for i in ttnn._ttnn.reports.get_buffers([device])}
    assert got == {
        (1048704, 2048, ttnn.BufferType.DRAM),
        (1050752, 16384, ttnn.BufferType.DRAM),
        (1570816, 2048, ttnn.BufferType.L1),
    }
    assert all(i.device_id == device.id() for i in ttnn._ttnn.reports.get_buffers([device]))
    del c
    gc.collect()
    assert len(ttnn._ttnn.reports.get_buffers([device])) == 2
    assert a.is_allocated() and b.is_allocated()


def test_get_buffers_sees_intermediates_and_trace_buffers(device, tile):
    """GIVEN an op chain WHEN the intermediate is dropped THEN it is gone; a captured trace adds a TRACE buffer."""
    x = tile(device, 1.0)
    ttnn.relu(ttnn.add(x, x))  # warm-up (its kernel binaries stay allocated)
    before = len(ttnn._ttnn.reports.get_buffers(device))
    tid = ttnn.begin_trace_capture(device)
    out = ttnn.relu(ttnn.add(x, x))  # the add's output is an intermediate, freed at once
    ttnn.end_trace_capture(device, tid)
    kinds = [i.buffer_type for i in ttnn._ttnn.reports.get_buffers(device)]
    assert len(kinds) == before + 2  # out + trace buffer
    assert kinds.count(ttnn.BufferType.TRACE) == 1
    ttnn.release_trace(device, tid)
    assert ttnn.BufferType.TRACE not in [i.buffer_type for i in ttnn._ttnn.reports.get_buffers(device)]
    assert out.is_allocated()


def test_get_device_info_reports_p150_values(device):
    info = ttnn._ttnn.reports.get_device_info(device)
    assert info.l1_num_banks == 130
    assert info.l1_bank_size == 1461120
    assert info.worker_l1_size == 1572864
    assert info.num_compute_cores == 130
    assert info.address_at_first_l1_cb_buffer == 111744
    assert info.total_l1_memory == 204472320
    assert info.num_dram_banks == 8


def test_buffer_pages_are_round_robin_over_banks(device, tile):
    import torch

    t = tile(device, torch.zeros(64, 64))  # 4 tiles
    pages = [p for p in ttnn._ttnn.reports.get_buffer_pages([device]) if p.address == t.buffer_address()]
    assert [(p.page_index, p.bank_id, p.page_address) for p in pages] == [
        (i, i, t.buffer_address()) for i in range(4)
    ]
