"""Element-wise and shape ops of ttnn 0.81.1 beyond the core set: values against torch,
`view` sharing its input's buffer, one output buffer per split piece, topk's index dtypes,
and replays recomputing them from what the inputs hold then."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from ttrecord import emulator as ttnn


def _dev(device, values, dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT):
    return ttnn.from_torch(values, dtype=dtype, layout=layout, device=device)


X = torch.linspace(-3.0, 3.0, 32 * 64).reshape(1, 1, 32, 64)


@pytest.mark.parametrize(("call", "reference"), [
    (lambda t: ttnn.leaky_relu(t, 0.1), lambda x: F.leaky_relu(x, 0.1)),
    (lambda t: ttnn.relu6(t), F.relu6),
    (lambda t: ttnn.hardswish(t), F.hardswish),
    (lambda t: ttnn.hardsigmoid(t), F.hardsigmoid),
    (lambda t: ttnn.mish(t), F.mish),
    (lambda t: ttnn.swish(t), F.silu),
    (lambda t: ttnn.erf(t), torch.erf),
    (lambda t: ttnn.floor(t), torch.floor),
    (lambda t: ttnn.ceil(t), torch.ceil),
    (lambda t: ttnn.sign(t), torch.sign),
    (lambda t: ttnn.round(t, decimals=1), lambda x: torch.round(x, decimals=1)),
    (lambda t: ttnn.softplus(t, beta=2.0, threshold=10.0), lambda x: F.softplus(x, 2.0, 10.0)),
    (lambda t: ttnn.elu(t, alpha=0.5), lambda x: F.elu(x, 0.5)),
    (lambda t: ttnn.selu(t), F.selu),
    (lambda t: ttnn.hardtanh(t, min_val=-0.5, max_val=2.0), lambda x: F.hardtanh(x, -0.5, 2.0)),
    (lambda t: ttnn.clip(t, -1.0, 1.5), lambda x: torch.clamp(x, -1.0, 1.5)),
    (lambda t: ttnn.logical_not(t), lambda x: (x == 0).float()),
    (lambda t: ttnn.logical_and(t, ttnn.relu(t)), lambda x: torch.logical_and(x != 0, F.relu(x) != 0).float()),
    (lambda t: ttnn.addcmul(t, t, t, value=0.5), lambda x: torch.addcmul(x, x, x, value=0.5)),
    (lambda t: ttnn.lerp(t, ttnn.relu(t), 0.25), lambda x: torch.lerp(x, F.relu(x), 0.25)),
    (lambda t: ttnn.fill(t, 3.0), lambda x: torch.full_like(x, 3.0)),
    (lambda t: ttnn.tril(t, diagonal=2), lambda x: torch.tril(x, 2)),
    (lambda t: ttnn.triu(t), torch.triu),
    (lambda t: ttnn.cumsum(t, 3), lambda x: torch.cumsum(x, 3)),
    (lambda t: ttnn.cumsum(t, 2, reverse_order=True), lambda x: torch.flip(torch.cumsum(torch.flip(x, [2]), 2), [2])),
])
def test_values_match_torch(device, call, reference):
    out = call(_dev(device, X))
    assert torch.allclose(ttnn.to_torch(out), reference(X), atol=1e-4)


def test_a_parameter_only_ttnn_lacks_is_a_type_error(device):
    with pytest.raises(TypeError, match="unexpected arguments"):
        ttnn.relu6(_dev(device, X), alpha=1.0)


def test_view_is_the_same_buffer_under_another_shape(device):
    t = _dev(device, X)
    live = set(device.live_buffers)
    v = ttnn.view(t, [1, 32, 64])
    assert set(device.live_buffers) == live and v.buffer_address() == t.buffer_address()
    assert torch.equal(ttnn.to_torch(v), X.reshape(1, 32, 64))
    assert ttnn.experimental.view(t, 1, 1, 32, 64).shape == ttnn.Shape([1, 1, 32, 64])
    assert ttnn.view(_dev(device, torch.zeros(2, 64, 64)), [1, 128, 64]).shape == ttnn.Shape([1, 128, 64])
    with pytest.raises(RuntimeError, match="the last dimension must not change"):
        ttnn.view(t, [1, 1, 64, 32])
    with pytest.raises(RuntimeError, match="cannot view"):
        ttnn.view(_dev(device, torch.zeros(1, 1, 8, 64)), [1, 2, 4, 64])  # a padded second-last dim
    ttnn.deallocate(v)
    assert not t.is_allocated()  # one buffer


def test_split_and_chunk_give_one_buffer_per_piece_in_order(device):
    t = _dev(device, X)
    pieces = ttnn.split(t, 24, dim=3)
    assert [list(p.shape) for p in pieces] == [[1, 1, 32, 24], [1, 1, 32, 24], [1, 1, 32, 16]]
    assert len({p.buffer_address() for p in pieces}) == 3
    assert torch.equal(ttnn.to_torch(pieces[2]), X[..., 48:])
    assert [list(p.shape) for p in ttnn.split(t, [16, 48], 3)] == [[1, 1, 32, 16], [1, 1, 32, 48]]
    halves = ttnn.chunk(t, 2, 2)
    assert torch.equal(ttnn.to_torch(halves[1]), X[..., 16:, :])
    assert ttnn.expand(_dev(device, X[..., :1, :]), [1, 1, 32, -1]).shape == ttnn.Shape([1, 1, 32, 64])


def test_topk_values_indices_and_index_dtypes(device):
    values = torch.randn(1, 1, 32, 64)
    bf = _dev(device, values, dtype=ttnn.bfloat16)
    top, idx = ttnn.topk(bf, k=4)
    expected = torch.topk(values.bfloat16().float(), 4)
    assert torch.equal(ttnn.to_torch(top).float(), expected.values) and idx.dtype == ttnn.uint16
    assert torch.equal(ttnn.to_torch(idx).long(), expected.indices)
    assert ttnn.topk(_dev(device, values), k=4)[1].dtype == ttnn.uint32  # float32 input: 32-bit indices
    small = ttnn.topk(bf, 3, -1, False)[0]
    assert torch.equal(ttnn.to_torch(small).float(), torch.topk(values.bfloat16().float(), 3, largest=False).values)
    labels = _dev(device, torch.arange(64, dtype=torch.int32).repeat(1, 1, 32, 1) + 100, dtype=ttnn.uint32)
    labelled = ttnn.topk(bf, k=2, indices_tensor=labels)[1]
    assert labelled.dtype == ttnn.uint32
    assert torch.equal(ttnn.to_torch(labelled).long(), torch.topk(values.bfloat16().float(), 2).indices + 100)


def test_replays_recompute_the_new_ops_from_current_inputs(device):
    inp = _dev(device, X)

    def step():
        return ttnn.topk(ttnn.leaky_relu(inp, 0.2), k=2)[0], ttnn.split(inp, 32, dim=3)[1]

    step()
    tid = ttnn.begin_trace_capture(device, cq_id=0)
    top, right = step()
    ttnn.end_trace_capture(device, tid, cq_id=0)
    new = torch.randn(1, 1, 32, 64)
    ttnn.copy_host_to_device_tensor(ttnn.from_torch(new, dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT), inp)
    ttnn.execute_trace(device, tid, cq_id=0)
    assert torch.allclose(ttnn.to_torch(top), torch.topk(F.leaky_relu(new, 0.2), 2).values, atol=1e-6)
    assert torch.equal(ttnn.to_torch(right), new[..., 32:])
    ttnn.release_trace(device, tid)


def test_statistics_and_pooling_values(device):
    values = torch.randn(1, 1, 32, 64)
    t = _dev(device, values)
    assert torch.allclose(ttnn.to_torch(ttnn.min(t, dim=-1, keepdim=True)), values.amin(-1, keepdim=True))
    assert torch.allclose(ttnn.to_torch(ttnn.std(t, dim=3)), values.std(3), atol=1e-5)
    assert torch.allclose(ttnn.to_torch(ttnn.var(t, dim=[2, 3], correction=False)), values.var((2, 3), correction=0),
                          atol=1e-5)
    assert ttnn.var(t, dim=3).shape == ttnn.Shape([1, 1, 32])
    with pytest.raises(ttnn.NotEmulatedError, match=r"ttnn\.min\(input_tensor\) over every dimension"):
        ttnn.min(t)
    nhwc = torch.randn(1, 4, 4, 32)
    pooled = ttnn.global_avg_pool2d(_dev(device, nhwc, layout=ttnn.ROW_MAJOR_LAYOUT))
    assert pooled.layout == ttnn.TILE_LAYOUT and pooled.shape == ttnn.Shape([1, 1, 1, 32])
    assert torch.allclose(ttnn.to_torch(pooled), nhwc.mean((1, 2), keepdim=True), atol=1e-5)
    rm = _dev(device, torch.randn(1, 1, 20, 40), layout=ttnn.ROW_MAJOR_LAYOUT)
    tiled = ttnn.tilize_with_zero_padding(rm)
    assert tiled.layout == ttnn.TILE_LAYOUT and tiled.padded_shape == ttnn.Shape([1, 1, 32, 64])
    assert torch.equal(ttnn.to_torch(tiled), ttnn.to_torch(rm))


def test_move_frees_its_input_first(device):
    low, t = _dev(device, torch.zeros(32, 32)), _dev(device, X[0, 0])
    low_address = low.buffer_address()
    ttnn.deallocate(low)
    moved = ttnn.move(t)
    assert moved.buffer_address() == low_address and not t.is_allocated()
    assert torch.equal(ttnn.to_torch(moved), X[0, 0])
