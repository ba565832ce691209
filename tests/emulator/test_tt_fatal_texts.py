"""Forbidden calls inside a trace capture raise RuntimeError with real ttnn's TT_FATAL texts."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from ttrecord import emulator as ttnn

READS = "Reads are not supported during trace capture."
EVENTS = "Event Synchronization is not supported during trace capture."


@pytest.fixture
def capturing(device, tile):
    x = tile(device, 1.0)
    ttnn.slice(x, [0, 0], [1, 1])  # warm-up: only the read may fail in the capture
    tid = ttnn.begin_trace_capture(device, cq_id=0)
    yield device, x, tid


def _assert_fatal(excinfo, text):
    message = str(excinfo.value)
    assert message.startswith("TT_FATAL @ ")
    assert "\ninfo:\n" in message
    assert text in message


@pytest.mark.parametrize(
    "read",
    [
        lambda x: x.cpu(),
        lambda x: x.to_torch(),
        lambda x: x.to_list(),
        lambda x: x.to_numpy(),
        lambda x: ttnn.slice(x, [0, 0], [1, 1]).item(),
        lambda x: ttnn.to_torch(x),
        lambda x: ttnn.from_device(x),
        lambda x: ttnn.copy_device_to_host_tensor(x, ttnn.from_torch(torch.zeros(32, 32))),
    ],
)
def test_every_device_to_host_read_is_fatal(capturing, read):
    _, x, _ = capturing
    with pytest.raises(RuntimeError) as excinfo:
        read(x)
    _assert_fatal(excinfo, READS)


@pytest.mark.parametrize(
    "write",
    [
        lambda d, x: ttnn.from_torch(torch.zeros(32, 32), layout=ttnn.TILE_LAYOUT, device=d),
        lambda d, x: ttnn.to_device(ttnn.from_torch(torch.zeros(32, 32)), d),
        lambda d, x: ttnn.from_torch(torch.zeros(32, 32)).to(d),
        lambda d, x: ttnn.copy_host_to_device_tensor(ttnn.from_torch(torch.zeros(32, 32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT), x),
        lambda d, x: ttnn.Tensor(np.zeros((32, 32), np.float32), ttnn.bfloat16, d, ttnn.TILE_LAYOUT),
        lambda d, x: ttnn.zeros((32, 32), device=d),
        lambda d, x: ttnn.full((32, 32), 1.0, device=d),
    ],
)
def test_every_host_to_device_write_is_fatal_with_the_trace_id(capturing, write):
    device, x, tid = capturing
    with pytest.raises(RuntimeError) as excinfo:
        write(device, x)
    _assert_fatal(excinfo, f"Writes are not supported during trace capture. trace id: {int(tid)}")


def test_synchronize_and_events_are_fatal(capturing):
    device, _, _ = capturing
    for call in (
        lambda: ttnn.synchronize_device(device),
        lambda: ttnn.record_event(device, 0),
    ):
        with pytest.raises(RuntimeError) as excinfo:
            call()
        _assert_fatal(excinfo, EVENTS)


def test_wait_for_an_event_recorded_before_capture_is_fatal(device):
    event = ttnn.record_event(device, 0)
    ttnn.begin_trace_capture(device, cq_id=0)
    with pytest.raises(RuntimeError) as excinfo:
        ttnn.wait_for_event(0, event)
    _assert_fatal(excinfo, EVENTS)


def test_the_same_calls_work_outside_capture(device, tile):
    x = tile(device, 2.0)
    assert x.cpu().to_list()[0][0] == 2.0
    ttnn.synchronize_device(device)
    ttnn.wait_for_event(0, ttnn.record_event(device, 0))
    ttnn.copy_host_to_device_tensor(ttnn.from_torch(torch.ones(32, 32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT), x)
    assert ttnn.to_torch(x)[0, 0].item() == 1.0


def test_allocation_inside_capture_is_allowed(capturing):
    """Allocating is not a write: allocate_tensor_on_device works inside a capture."""
    device, _, _ = capturing
    t = ttnn.allocate_tensor_on_device([32, 32], ttnn.bfloat16, ttnn.TILE_LAYOUT, device)
    assert t.is_allocated()


def test_lifecycle_errors(device, tile):
    """Executing an unknown/released trace, ending the wrong trace, and nested captures on one cq fail."""
    tid = ttnn.begin_trace_capture(device, cq_id=0)
    with pytest.raises(RuntimeError, match="is already being used for tracing"):
        ttnn.begin_trace_capture(device, cq_id=0)
    with pytest.raises(RuntimeError, match="is not being used for tracing"):
        ttnn.end_trace_capture(device, int(tid) + 100, cq_id=0)
    ttnn.end_trace_capture(device, tid, cq_id=0)
    ttnn.release_trace(device, tid)
    with pytest.raises(RuntimeError) as excinfo:
        ttnn.execute_trace(device, tid, cq_id=0)
    _assert_fatal(excinfo, f"Trace instance {int(tid)} must exist on Mesh device")
