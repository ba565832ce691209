"""Replaying a captured trace computes what the eager ops compute, for new input data."""

from __future__ import annotations

import torch

from ttrecord import emulator as ttnn


def _model(x, w1, w2, bias):
    h = ttnn.gelu(ttnn.linear(x, w1, bias=bias))
    h = ttnn.rms_norm(ttnn.add(h, x), epsilon=1e-6)
    return ttnn.softmax(ttnn.matmul(h, w2), dim=-1)


def test_replay_equals_eager_for_every_new_input(device):
    """GIVEN a captured multi-op model WHEN new inputs are copied into the captured input
    and the trace replayed THEN each output equals the eager output bit for bit."""
    torch.manual_seed(0)
    mk = lambda t: ttnn.from_torch(t, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)  # noqa: E731
    w1, w2, bias = mk(torch.randn(64, 64) / 8), mk(torch.randn(64, 32) / 8), mk(torch.randn(1, 64))
    inputs = [torch.randn(32, 64) for _ in range(3)]
    eager = [ttnn.to_torch(_model(mk(data), w1, w2, bias)) for data in inputs]

    x = mk(torch.zeros(32, 64))
    _model(x, w1, w2, bias)
    tid = ttnn.begin_trace_capture(device, cq_id=0)
    out = _model(x, w1, w2, bias)
    ttnn.end_trace_capture(device, tid, cq_id=0)
    for data, want in zip(inputs, eager):
        ttnn.copy_host_to_device_tensor(ttnn.from_torch(data, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT), x)
        ttnn.execute_trace(device, tid, cq_id=0)
        assert torch.equal(ttnn.to_torch(out), want)
    ttnn.release_trace(device, tid)


def test_replay_reruns_ops_against_current_memory(device):
    """GIVEN a trace out = x * 2 WHEN x is updated in place between replays THEN out follows x."""
    x = ttnn.from_torch(torch.ones(32, 32), dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT, device=device)
    ttnn.multiply(x, 2.0)  # warm-up
    tid = ttnn.begin_trace_capture(device)
    out = ttnn.multiply(x, 2.0)
    ttnn.end_trace_capture(device, tid)
    for value in (3.0, -1.5):
        ttnn.copy_host_to_device_tensor(ttnn.from_torch(torch.full((32, 32), value), dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT), x)
        ttnn.execute_trace(device, tid)
        assert torch.all(ttnn.to_torch(out) == 2 * value)
