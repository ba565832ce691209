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


def test_default_region_is_zero_so_any_captured_op_fails(tile):
    device = ttnn.open_device(device_id=1)
    try:
        x = tile(device, 1.0)
        tid = ttnn.begin_trace_capture(device)
        ttnn.relu(x)
        with pytest.raises(RuntimeError, match="but only 0B is allocated for trace region"):
            ttnn.end_trace_capture(device, tid)
    finally:
        ttnn.close_device(device)


def test_traces_accumulate_and_release_returns_their_space(tile):
    """GIVEN room for two one-op traces WHEN a third is captured THEN it fails until one is released."""
    device = ttnn.open_device(device_id=1, trace_region_size=8192)
    try:
        x = tile(device, 1.0)
        tids = []
        for _ in range(2):
            tid = ttnn.begin_trace_capture(device)
            ttnn.relu(x)
            ttnn.end_trace_capture(device, tid)
            tids.append(tid)
        tid = ttnn.begin_trace_capture(device)
        ttnn.relu(x)
        with pytest.raises(RuntimeError, match="Creating trace buffers of size 12288B"):
            ttnn.end_trace_capture(device, tid)
        ttnn.release_trace(device, tids[0])
        tid = ttnn.begin_trace_capture(device)
        ttnn.relu(x)
        ttnn.end_trace_capture(device, tid)
    finally:
        ttnn.close_device(device)


def test_trace_page_size_choice_follows_tt_metal():
    """The largest power of two in [1024, 4096] that wastes least when padded to all 8 banks."""
    assert interleaved_page_size(4096, 8, 1024, 4096) == 1024
    assert interleaved_page_size(8 * 4096, 8, 1024, 4096) == 4096
    assert interleaved_page_size(3 * 8 * 1024, 8, 1024, 4096) == 1024
