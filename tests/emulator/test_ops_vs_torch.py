"""Ops compute on the host and match a torch reference within bfloat16 tolerance."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from ttrecord import emulator as ttnn

BF16 = dict(atol=0.06, rtol=0.02)


def _dev(device, t, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT):
    return ttnn.from_torch(t, dtype=dtype, layout=layout, device=device)


def _ref(t):
    return t.to(torch.bfloat16).float()


@pytest.fixture
def ab():
    torch.manual_seed(1)
    return torch.randn(2, 64, 96), torch.randn(2, 64, 96)


@pytest.mark.parametrize(
    "op,ref",
    [
        (ttnn.add, torch.add),
        (ttnn.subtract, torch.sub),
        (ttnn.multiply, torch.mul),
    ],
)
def test_binary_ops_match_torch(device, ab, op, ref):
    a, b = ab
    got = ttnn.to_torch(op(_dev(device, a), _dev(device, b))).float()
    assert torch.allclose(got, ref(_ref(a), _ref(b)), **BF16)


def test_multiply_by_python_scalar(device, ab):
    a, _ = ab
    got = ttnn.to_torch(ttnn.multiply(_dev(device, a), 0.5)).float()
    assert torch.allclose(got, _ref(a) * 0.5, **BF16)


@pytest.mark.parametrize(
    "op,ref",
    [(ttnn.relu, torch.relu), (ttnn.gelu, F.gelu), (ttnn.silu, F.silu), (ttnn.exp, torch.exp)],
)
def test_unary_ops_match_torch(device, ab, op, ref):
    a, _ = ab
    got = ttnn.to_torch(op(_dev(device, a))).float()
    assert torch.allclose(got, ref(_ref(a)), atol=0.1, rtol=0.02)


def test_matmul_and_linear_match_torch(device):
    torch.manual_seed(2)
    a, b, bias = torch.randn(64, 128), torch.randn(128, 96), torch.randn(1, 96)
    got = ttnn.to_torch(ttnn.matmul(_dev(device, a), _dev(device, b))).float()
    assert torch.allclose(got, _ref(a) @ _ref(b), atol=0.5, rtol=0.02)
    lin = ttnn.to_torch(ttnn.linear(_dev(device, a), _dev(device, b), bias=_dev(device, bias))).float()
    assert torch.allclose(lin, _ref(a) @ _ref(b) + _ref(bias), atol=0.5, rtol=0.02)


def test_softmax_and_norms_match_torch(device):
    torch.manual_seed(3)
    x, w = torch.randn(32, 64), torch.rand(1, 64) + 0.5
    soft = ttnn.to_torch(ttnn.softmax(_dev(device, x), dim=-1)).float()
    assert torch.allclose(soft, torch.softmax(_ref(x), -1), atol=0.01)
    rms = ttnn.to_torch(ttnn.rms_norm(_dev(device, x), epsilon=1e-6, weight=_dev(device, w))).float()
    want = _ref(x) * torch.rsqrt(_ref(x).pow(2).mean(-1, keepdim=True) + 1e-6) * _ref(w)
    assert torch.allclose(rms, want, **BF16)
    ln = ttnn.to_torch(ttnn.layer_norm(_dev(device, x), epsilon=1e-5)).float()
    assert torch.allclose(ln, F.layer_norm(_ref(x), (64,), eps=1e-5), **BF16)


def test_data_movement_ops_match_torch(device):
    x = torch.arange(2 * 32 * 64, dtype=torch.float32).reshape(2, 32, 64)
    t = _dev(device, x, dtype=ttnn.float32)
    assert torch.equal(ttnn.to_torch(ttnn.reshape(t, (64, 64))), x.reshape(64, 64))
    assert torch.equal(ttnn.to_torch(ttnn.permute(t, (0, 2, 1))), x.permute(0, 2, 1))
    assert torch.equal(ttnn.to_torch(ttnn.transpose(t, -2, -1)), x.transpose(-2, -1))
    assert torch.equal(ttnn.to_torch(ttnn.concat([t, t], dim=1)), torch.cat([x, x], 1))
    assert torch.equal(ttnn.to_torch(ttnn.slice(t, [0, 0, 0], [1, 32, 32])), x[0:1, 0:32, 0:32])
    rm = ttnn.to_layout(t, ttnn.ROW_MAJOR_LAYOUT)
    assert rm.layout == ttnn.ROW_MAJOR_LAYOUT and torch.equal(ttnn.to_torch(rm), x)
    l1 = ttnn.to_memory_config(t, ttnn.L1_MEMORY_CONFIG)
    assert l1.memory_config().buffer_type == ttnn.BufferType.L1 and torch.equal(ttnn.to_torch(l1), x)
    assert ttnn.to_layout(t, ttnn.TILE_LAYOUT) is t


def test_embedding_typecast_and_reductions(device):
    table = torch.randn(10, 32)
    ids = torch.tensor([[3, 1, 4, 1]], dtype=torch.int32)
    emb = ttnn.embedding(
        ttnn.from_torch(ids, dtype=ttnn.uint32, device=device),
        ttnn.from_torch(table, dtype=ttnn.float32, device=device),
    )
    assert torch.equal(ttnn.to_torch(emb), table[ids.long()])
    x = torch.randn(32, 64)
    t = _dev(device, x, dtype=ttnn.float32)
    assert ttnn.typecast(t, ttnn.bfloat16).dtype == ttnn.bfloat16
    arg = ttnn.argmax(ttnn.to_layout(t, ttnn.ROW_MAJOR_LAYOUT), dim=-1)
    assert arg.dtype == ttnn.uint32 and torch.equal(ttnn.to_torch(arg).long(), x.argmax(-1))
    assert torch.allclose(ttnn.to_torch(ttnn.sum(t, dim=-1)), x.sum(-1), atol=1e-4)
    assert torch.allclose(ttnn.to_torch(ttnn.mean(t, dim=0)), x.mean(0), atol=1e-5)


def test_output_tensor_is_written_in_place(device):
    a = _dev(device, torch.ones(32, 32))
    out = _dev(device, torch.zeros(32, 32))
    result = ttnn.add(a, a, output_tensor=out)
    assert result is out and torch.all(ttnn.to_torch(out) == 2)


def test_copy_writes_into_the_existing_buffer(device):
    src = _dev(device, torch.full((32, 32), 5.0))
    dst = _dev(device, torch.zeros(32, 32))
    address = dst.buffer_address()
    ttnn.copy(src, dst)
    assert dst.buffer_address() == address and torch.all(ttnn.to_torch(dst) == 5)


def test_experimental_submodule_op(device):
    x, cos, sin = torch.randn(1, 1, 32, 64), torch.randn(1, 1, 32, 64), torch.randn(1, 1, 32, 64)
    got = ttnn.to_torch(
        ttnn.experimental.rotary_embedding(_dev(device, x, ttnn.float32), _dev(device, cos, ttnn.float32), _dev(device, sin, ttnn.float32))
    )
    rotated = torch.cat((-x[..., 32:], x[..., :32]), -1)
    assert torch.allclose(got, x * cos + rotated * sin, atol=1e-5)


def test_device_ops_reject_host_tensors_but_layout_ops_run_on_host():
    host = ttnn.from_torch(torch.ones(32, 32), dtype=ttnn.bfloat16)
    with pytest.raises(RuntimeError, match="must be on device"):
        ttnn.add(host, host)
    tiled = ttnn.to_layout(host, ttnn.TILE_LAYOUT)
    assert tiled.storage_type() == ttnn.StorageType.HOST and tiled.layout == ttnn.TILE_LAYOUT


def test_tensor_comparisons_are_ttnn_ops(device):
    """As in real ttnn, `a == b` runs ttnn.eq (elementwise) and tensors hash by identity."""
    a = _dev(device, torch.tensor([[1.0, 2.0]]))
    b = _dev(device, torch.tensor([[1.0, 3.0]]))
    assert ttnn.to_torch(a == b).tolist() == [[1.0, 0.0]]
    assert len({a, b}) == 2
