"""Trace command buffers are charged to trace_region_size; too small a region fails like real ttnn."""

from __future__ import annotations

import pytest

from ttrecord import emulator as ttnn
from ttrecord.emulator.trace import interleaved_page_size


def test_capture_larger_than_the_region_fails_with_real_message(tile):
    """GIVEN a region of 8 KiB WHEN 4 ops (4 KiB each) are captured THEN end_trace_capture raises."""
    device = ttnn.open_device(device_id=1, trace_region_size=8192)
    try:
        x = tile(device, 1.0)
        ttnn.add(x, 1.0)  # warm-up
        tid = ttnn.begin_trace_capture(device)
        for _ in range(4):
            x = ttnn.add(x, 1.0)
        with pytest.raises(RuntimeError) as excinfo:
            ttnn.end_trace_capture(device, tid)
        assert (
            f"Creating trace buffers of size 16384B on MeshDevice {device.id()}, but only 8192B is allocated for trace region."
            in str(excinfo.value)
        )
        assert not ttnn.is_trace_capture_active(device)
    finally:
        ttnn.close_device(device)


def test_default_region_is_zero_so_trace_buffers_are_placed_dynamically(tile):
    """ttnn 0.81.1 with trace_region_size=0 (the default) keeps no region: end_trace_capture
    places the trace buffer top-down in DRAM (tt-metal PR #36999) instead of refusing it."""
    device = ttnn.open_device(device_id=1)
    try:
        x = tile(device, 1.0)
        ttnn.relu(x)  # warm-up
        tid = ttnn.begin_trace_capture(device)
        ttnn.relu(x)
        ttnn.end_trace_capture(device, tid)
        buf = device.traces[int(tid)].buffer.desc
        assert buf.buffer_type == ttnn.BufferType.DRAM and buf.address > x.buffer_address()
        ttnn.execute_trace(device, tid, blocking=True)
        ttnn.release_trace(device, tid)
    finally:
        ttnn.close_device(device)


def _capture_ops(device, x, n):
    ttnn.relu(x)  # warm-up
    tid = ttnn.begin_trace_capture(device)
    for _ in range(n):
        ttnn.relu(x)
    return tid


def test_traces_accumulate_and_release_returns_their_space(tile):
    """GIVEN room for two 8-op traces (32 KiB each) WHEN a third is captured THEN it fails until one is released."""
    device = ttnn.open_device(device_id=1, trace_region_size=65536)
    try:
        x = tile(device, 1.0)
        tids = []
        for _ in range(2):
            tid = _capture_ops(device, x, 8)
            ttnn.end_trace_capture(device, tid)
            tids.append(tid)
        tid = _capture_ops(device, x, 8)
        with pytest.raises(RuntimeError, match="Creating trace buffers of size 98304B"):
            ttnn.end_trace_capture(device, tid)
        ttnn.release_trace(device, tids[0])
        tid = _capture_ops(device, x, 8)
        ttnn.end_trace_capture(device, tid)
    finally:
        ttnn.close_device(device)


def test_trace_page_size_choice_follows_tt_metal():
    """The largest power of two in [1024, 4096] that wastes least when padded to all 8 banks."""
    assert interleaved_page_size(4096, 8, 1024, 4096) == 1024
    assert interleaved_page_size(8 * 4096, 8, 1024, 4096) == 4096
    assert interleaved_page_size(3 * 8 * 1024, 8, 1024, 4096) == 1024


def test_trace_buffers_sit_at_the_top_of_dram_split_over_the_banks(tile):
    """Measured on ttnn 0.81.1: the region is trace_region_size / 8 per bank at the top of DRAM;
    an empty capture still gets a 1024 B/bank buffer; with no region it is a DRAM buffer at the very top."""
    for region, expected in ((1 << 20, [(4278059008, 1024, "TRACE")]), (0, [(4278189056, 1024, "DRAM")])):
        device = ttnn.open_device(device_id=1, trace_region_size=region)
        try:
            tid = ttnn.begin_trace_capture(device)
            ttnn.end_trace_capture(device, tid)
            got = [(b.address, b.max_size_per_bank, b.buffer_type.name) for b in ttnn._ttnn.reports.get_buffers(device)]
            assert got == expected
            ttnn.release_trace(device, tid)
            assert ttnn._ttnn.reports.get_buffers(device) == []
        finally:
            ttnn.close_device(device)


def test_l1_small_size_is_taken_from_the_top_of_l1(tile):
    device = ttnn.open_device(device_id=1, l1_small_size=32768)
    try:
        t = tile(device, 1.0, memory_config=ttnn.L1_MEMORY_CONFIG)
        assert t.buffer_address() == 1570816 - 32768
        assert ttnn._ttnn.reports.get_device_info(device).l1_bank_size == 1428352
    finally:
        ttnn.close_device(device)
