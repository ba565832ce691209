"""Each trace hazard corrupts numbers for its documented reason, reproduced numerically."""

from __future__ import annotations

import warnings

import torch

from ttrecord import emulator as ttnn


def _capture(device, fn):
    fn()  # warm-up: a program first compiled inside a capture aborts it, as on a device
    tid = ttnn.begin_trace_capture(device, cq_id=0)
    out = fn()
    ttnn.end_trace_capture(device, tid, cq_id=0)
    return tid, out


def test_buffer_allocated_after_capture_on_a_freed_intermediate_is_overwritten(device, tile):
    """GIVEN a trace whose intermediate was freed at the end of capture WHEN a tensor is allocated
    after capture THEN it lands on the intermediate's address and the replay writes x + w into it."""
    x, w = tile(device, 3.0), tile(device, 5.0)
    seen = {}

    def step():
        hidden = ttnn.add(x, w)
        seen["hidden"] = hidden.buffer_address()
        return ttnn.multiply(hidden, 0.5)

    tid, out = _capture(device, step)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        victim = tile(device, 1.0)
    assert victim.buffer_address() == seen["hidden"]
    ttnn.execute_trace(device, tid)
    assert torch.all(ttnn.to_torch(victim) == 8.0)  # the intermediate's value, not 1.0
    assert torch.all(ttnn.to_torch(out) == 4.0)


def test_new_tensor_instead_of_copy_leaves_the_output_stale(device, tile):
    """GIVEN out = x * 2 captured on x = 1 WHEN new data goes to a new tensor THEN replay still reads x."""
    x = tile(device, 1.0)
    tid, out = _capture(device, lambda: ttnn.multiply(x, 2.0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        x_new = tile(device, 7.0)
    ttnn.execute_trace(device, tid)
    assert x_new.buffer_address() != x.buffer_address()
    assert torch.all(ttnn.to_torch(out) == 2.0)


def test_freed_and_reused_input_feeds_the_new_tenant_bytes(device, tile):
    """GIVEN out = x + 10 captured WHEN x is freed and its address reused by -100 THEN replay gives -90."""
    x, ten = tile(device, 1.0), tile(device, 10.0)
    tid, out = _capture(device, lambda: ttnn.add(x, ten))
    address = x.buffer_address()
    ttnn.deallocate(x)
    assert not x.is_allocated()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tenant = tile(device, -100.0)
    assert tenant.buffer_address() == address
    ttnn.execute_trace(device, tid)
    assert torch.all(ttnn.to_torch(out) == -90.0)


def test_python_scalar_is_baked_into_the_trace(device, tile):
    """GIVEN multiply(x, s) captured with s = 3 WHEN s changes in Python THEN replay still multiplies by 3."""
    x = tile(device, 1.0)
    scale = 3.0
    tid, out = _capture(device, lambda: ttnn.multiply(x, scale))
    scale = 5.0  # noqa: F841 - the point: the trace never sees this
    ttnn.execute_trace(device, tid)
    assert torch.all(ttnn.to_torch(out) == 3.0)


def test_output_handles_from_earlier_replays_read_the_latest_replay(device, tile):
    """GIVEN three replays with different inputs WHEN the same output handle is kept THEN all reads equal the last."""
    x, w = tile(device, 0.0), tile(device, 100.0)
    tid, out = _capture(device, lambda: ttnn.add(x, w))
    handles = []
    for step in range(3):
        ttnn.copy_host_to_device_tensor(ttnn.from_torch(torch.full((32, 32), float(step)), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT), x)
        ttnn.execute_trace(device, tid)
        handles.append(out)
    assert [ttnn.to_torch(h)[0, 0].item() for h in handles] == [102.0] * 3


def test_two_live_traces_writing_the_same_range_destroy_each_other(device, tile):
    """GIVEN trace B's output allocated on trace A's freed intermediate WHEN A replays after B THEN B's output is overwritten."""
    x, w = tile(device, 1.0), tile(device, 20.0)

    def model_a():
        hidden = ttnn.add(x, w)
        return ttnn.multiply(hidden, 2.0)

    tid_a, out_a = _capture(device, model_a)
    tid_b, out_b = _capture(device, lambda: ttnn.add(x, 1.0))
    ttnn.execute_trace(device, tid_b)
    assert ttnn.to_torch(out_b)[0, 0].item() == 2.0
    ttnn.execute_trace(device, tid_a)
    assert ttnn.to_torch(out_b)[0, 0].item() == 21.0
