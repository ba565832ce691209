"""The ops tt-metal's model code calls compute what their ttnn docs say, checked against
plain torch formulas written independently of the emulator's code."""

from __future__ import annotations

import math

import torch

from ttrecord import emulator as ttnn


def dev_tensor(device, t, layout=ttnn.TILE_LAYOUT, dtype=ttnn.float32):
    return ttnn.from_torch(t, dtype=dtype, layout=layout, device=device)


def host(t):
    return ttnn.to_torch(t).float()


def test_tilize_untilize_and_padding(device):
    x = torch.randn(1, 1, 20, 40)
    rm = dev_tensor(device, x, ttnn.ROW_MAJOR_LAYOUT, ttnn.bfloat16)
    tiled = ttnn.tilize_with_val_padding(rm, [1, 1, 32, 64], 7.0)
    # measured on ttnn 0.81.1: the padding is physical, the logical shape stays [1, 1, 20, 40]
    assert tiled.layout == ttnn.TILE_LAYOUT and list(tiled.shape) == [1, 1, 20, 40]
    assert list(tiled.padded_shape) == [1, 1, 32, 64] and torch.equal(host(tiled), x.bfloat16().float())
    back = ttnn.untilize_with_unpadding(ttnn.pad(tiled, [(0, 0), (0, 0), (0, 12), (0, 24)], 7.0), [0, 0, 19, 39])
    assert back.layout == ttnn.ROW_MAJOR_LAYOUT and torch.equal(host(back), x.bfloat16().float())
    assert ttnn.untilize(ttnn.tilize(rm)).layout == ttnn.ROW_MAJOR_LAYOUT


def test_pad_unsqueeze_repeat(device):
    x = torch.randn(2, 3, 32, 32)
    t = dev_tensor(device, x)
    padded = ttnn.pad(t, [(0, 0), (0, 1), (0, 0), (0, 32)], value=-1.0)
    assert torch.equal(host(padded), torch.nn.functional.pad(x, (0, 32, 0, 0, 0, 1), value=-1.0))
    assert list(ttnn.unsqueeze_to_4D(dev_tensor(device, torch.randn(32, 32))).shape) == [1, 1, 32, 32]
    assert torch.equal(host(ttnn.repeat(t, [1, 2, 1, 1])), x.repeat(1, 2, 1, 1))
    assert torch.equal(host(ttnn.repeat_interleave(t, 2, dim=1)), x.repeat_interleave(2, dim=1))


def test_plus_one_is_in_place_and_keeps_the_address(device):
    pos = ttnn.from_torch(torch.tensor([3, -1, 7], dtype=torch.int32), dtype=ttnn.int32, device=device)
    before = pos.buffer_address()
    ttnn.plus_one(pos)
    assert pos.buffer_address() == before and ttnn.to_torch(pos).tolist() == [4, 0, 8]
    ttnn.plus_one(pos, skip_negative_entries=True)
    assert ttnn.to_torch(pos).tolist() == [5, 1, 9]


def test_binary_op_applies_input_activation(device):
    a, b = torch.randn(32, 64), torch.randn(32, 64)
    out = ttnn.mul(dev_tensor(device, a), dev_tensor(device, b), input_tensor_a_activations=[ttnn.UnaryOpType.SILU])
    assert torch.allclose(host(out), torch.nn.functional.silu(a) * b, atol=1e-5)


def test_paged_update_cache_writes_each_user_row_into_its_page(device):
    blocks, kv, bs, hd, users = 8, 2, 32, 64, 4
    cache = torch.zeros(blocks, kv, bs, hd)
    table = torch.tensor([[5, 1], [0, 7], [2, 3], [4, 6]], dtype=torch.int32)
    pos = torch.tensor([33, 0, 31, -1], dtype=torch.int32)
    new = torch.randn(1, users, kv, hd)
    tt_cache = dev_tensor(device, cache)
    address = tt_cache.buffer_address()
    ttnn.experimental.paged_update_cache(
        tt_cache, dev_tensor(device, new),
        update_idxs_tensor=ttnn.from_torch(pos, dtype=ttnn.int32, device=device),
        page_table=ttnn.from_torch(table, dtype=ttnn.int32, device=device))
    expected = cache.clone()
    expected[1, :, 1] = new[0, 0]   # user 0, pos 33 -> table[0][1] = 1, slot 1
    expected[0, :, 0] = new[0, 1]   # user 1, pos 0 -> block 0
    expected[2, :, 31] = new[0, 2]  # user 2, pos 31 -> block 2, slot 31; user 3 inactive
    assert tt_cache.buffer_address() == address and torch.equal(host(tt_cache), expected)


def test_qkv_heads_rope_and_concat_decode(device):
    users, nh, nkv, hd = 32, 4, 2, 64
    fused = torch.randn(1, 1, users, (nh + 2 * nkv) * hd)
    q, k, v = ttnn.experimental.nlp_create_qkv_heads_decode(dev_tensor(device, fused), num_heads=nh, num_kv_heads=nkv)
    heads = fused.reshape(users, nh + 2 * nkv, hd)
    assert torch.equal(host(q), heads[:, :nh].unsqueeze(0)) and torch.equal(host(v), heads[:, nh + nkv:].unsqueeze(0))
    trans = torch.zeros(1, 1, 32, 32)
    trans[..., torch.arange(0, 32, 2), torch.arange(1, 32, 2)] = 1
    trans[..., torch.arange(1, 32, 2), torch.arange(0, 32, 2)] = -1
    cos, sin = torch.randn(1, users, 1, hd), torch.randn(1, users, 1, hd)
    rot = ttnn.experimental.rotary_embedding_llama(q, dev_tensor(device, cos), dev_tensor(device, sin),
                                                   dev_tensor(device, trans), is_decode_mode=True)
    x = heads[:, :nh].unsqueeze(0)
    pairs = torch.stack((-x[..., 1::2], x[..., 0::2]), dim=-1).reshape(x.shape)  # (a, b) -> (-b, a)
    assert torch.allclose(host(rot), x * cos + pairs * sin, atol=1e-5)
    concat = ttnn.experimental.nlp_concat_heads_decode(q, num_heads=nh)
    assert torch.equal(host(concat), x.reshape(1, 1, users, nh * hd))


def test_sdpa_prefill_and_decode_against_torch(device):
    b, nh, nkv, s, hd = 1, 4, 2, 64, 32
    q, k, v = torch.randn(b, nh, s, hd), torch.randn(b, nkv, s, hd), torch.randn(b, nkv, s, hd)
    out = ttnn.transformer.scaled_dot_product_attention(dev_tensor(device, q), dev_tensor(device, k), dev_tensor(device, v))
    ref = torch.nn.functional.scaled_dot_product_attention(q, k.repeat_interleave(2, 1), v.repeat_interleave(2, 1), is_causal=True)
    assert torch.allclose(host(out), ref, atol=1e-4)
    users = 2
    qd = torch.randn(1, users, nh, hd)
    kc, vc = torch.randn(users, nkv, s, hd), torch.randn(users, nkv, s, hd)
    pos = [5, 40]
    got = host(ttnn.transformer.scaled_dot_product_attention_decode(
        dev_tensor(device, qd), dev_tensor(device, kc), dev_tensor(device, vc),
        cur_pos_tensor=ttnn.from_torch(torch.tensor(pos, dtype=torch.int32), dtype=ttnn.int32, device=device)))
    for u, p in enumerate(pos):
        kk, vv = kc[u, :, : p + 1].repeat_interleave(2, 0), vc[u, :, : p + 1].repeat_interleave(2, 0)
        attn = torch.softmax(qd[0, u].unsqueeze(1) @ kk.transpose(-1, -2) / math.sqrt(hd), -1) @ vv
        assert torch.allclose(got[0, u], attn.squeeze(1), atol=1e-4)


def test_paged_sdpa_decode_reads_through_the_page_table(device):
    users, nkv, nh, bs, hd, blocks = 2, 1, 2, 32, 32, 4
    kc, vc = torch.randn(users, nkv, 2 * bs, hd), torch.randn(users, nkv, 2 * bs, hd)
    table = torch.tensor([[3, 0], [1, 2]], dtype=torch.int32)
    paged_k, paged_v = torch.zeros(blocks, nkv, bs, hd), torch.zeros(blocks, nkv, bs, hd)
    for u in range(users):
        for j in range(2):
            paged_k[table[u, j]] = kc[u, :, j * bs:(j + 1) * bs]
            paged_v[table[u, j]] = vc[u, :, j * bs:(j + 1) * bs]
    q = torch.randn(1, users, nh, hd)
    pos = ttnn.from_torch(torch.tensor([50, 10], dtype=torch.int32), dtype=ttnn.int32, device=device)
    plain = ttnn.transformer.scaled_dot_product_attention_decode(dev_tensor(device, q), dev_tensor(device, kc), dev_tensor(device, vc), cur_pos_tensor=pos)
    paged = ttnn.transformer.paged_scaled_dot_product_attention_decode(
        dev_tensor(device, q), dev_tensor(device, paged_k), dev_tensor(device, paged_v),
        ttnn.from_torch(table, dtype=ttnn.int32, device=device), cur_pos_tensor=pos)
    assert torch.allclose(host(paged), host(plain), atol=1e-5)


def test_conv2d_and_max_pool2d_on_flattened_nhwc(device):
    n, h, w, cin, cout = 1, 8, 8, 16, 32
    x = torch.randn(n, h, w, cin)
    weight, bias = torch.randn(cout, cin, 3, 3) / 10, torch.randn(1, 1, 1, cout)
    tt_x = dev_tensor(device, x.reshape(1, 1, n * h * w, cin), ttnn.ROW_MAJOR_LAYOUT)
    out, (oh, ow) = ttnn.conv2d(
        input_tensor=tt_x, weight_tensor=ttnn.from_torch(weight, dtype=ttnn.float32),
        bias_tensor=ttnn.from_torch(bias, dtype=ttnn.float32), device=device, in_channels=cin, out_channels=cout,
        batch_size=n, input_height=h, input_width=w, kernel_size=(3, 3), stride=(2, 2), padding=(1, 1),
        return_output_dim=True)
    ref = torch.nn.functional.conv2d(x.permute(0, 3, 1, 2), weight, bias.reshape(-1), stride=2, padding=1)
    assert (oh, ow) == (4, 4) and list(out.shape) == [1, 1, 16, cout]
    assert torch.allclose(host(out), ref.permute(0, 2, 3, 1).reshape(1, 1, 16, cout), atol=1e-4)
    pooled = ttnn.max_pool2d(tt_x, n, h, w, cin, [2, 2], [2, 2], [0, 0], [1, 1])
    ref_pool = torch.nn.functional.max_pool2d(x.permute(0, 3, 1, 2), 2)
    assert torch.equal(host(pooled), ref_pool.permute(0, 2, 3, 1).reshape(1, 1, 16, cin))


def test_where_clamp_and_as_tensor(device):
    a = torch.randn(32, 32)
    t = ttnn.as_tensor(a, dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT, device=device, cache_file_name="/nonexistent/w")
    assert torch.equal(host(ttnn.where(ttnn.gt(t, 0.0), t, 0.0)), torch.relu(a))
    assert torch.equal(host(ttnn.clamp(t, min=-0.5, max=0.5)), a.clamp(-0.5, 0.5))
