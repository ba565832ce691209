"""Non-blocking execute_trace followed by synchronize_device gives the replayed result."""

from __future__ import annotations

import torch

from ttrecord import emulator as ttnn


def test_non_blocking_execute_then_synchronize(device, tile):
    x = tile(device, 2.0)
    ttnn.multiply(x, x)  # warm-up
    tid = ttnn.begin_trace_capture(device, cq_id=0)
    out = ttnn.multiply(x, x)
    ttnn.end_trace_capture(device, tid, cq_id=0)
    ttnn.copy_host_to_device_tensor(ttnn.from_torch(torch.full((32, 32), 3.0), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT), x)
    ttnn.execute_trace(device, tid, cq_id=0, blocking=False)
    ttnn.synchronize_device(device)
    assert torch.all(ttnn.to_torch(out) == 9.0)
    ttnn.execute_trace(device, tid, cq_id=0, blocking=True)
    assert torch.all(ttnn.to_torch(out) == 9.0)


def test_events_between_replays(device, tile):
    x = tile(device, 1.0)
    ttnn.add(x, x)  # warm-up
    tid = ttnn.begin_trace_capture(device)
    out = ttnn.add(x, x)
    ttnn.end_trace_capture(device, tid)
    ttnn.execute_trace(device, tid, blocking=False)
    event = ttnn.record_event(device, 0)
    ttnn.event_synchronize(event)
    assert torch.all(ttnn.to_torch(out) == 2.0)
