"""tt-metal's tt_transformers decode-trace path, reproduced with random weights on a 1x2 mesh
(open_mesh_device instead of the test fixture), runs on the emulator with no stand-ins and its
traced logits equal its eager logits step by step.

Modeled on models/tt_transformers/tt/generator.py (compile run, `copy_host_to_device` of the
host inputs, capture of `transform_decode_inputs_device` + `ttnn_decode_forward`, replays that
copy new host inputs into the captured device inputs), model.py (embedding, unsqueeze_to_4D,
rope indices, all-gathered logits, plus_one on the positions), attention.py (fused QKV,
nlp_create_qkv_heads_decode into L1 height-sharded heads, rotary_embedding_llama,
paged_update_cache, paged SDPA decode, nlp_concat_heads_decode, output projection with an
all-reduce), mlp.py (w1/w3 with a SILU-fused mul, w2 with an all-reduce) and the decode
residual kept L1 width-sharded.
"""

from __future__ import annotations

import pytest
import torch

from ttrecord import emulator as ttnn

pytestmark = pytest.mark.slow

USERS, DIM, HEADS, KV_HEADS, HEAD_DIM, FF, VOCAB, LAYERS = 32, 128, 4, 2, 32, 256, 256, 2
BLOCK, MAX_SEQ = 32, 64


class CCL:
    """all-reduce as reduce-scatter + all-gather with rotating semaphores (tt_ccl.py's way)."""

    def __init__(self, mesh):
        grid = ttnn.CoreRangeSet({ttnn.CoreRange(ttnn.CoreCoord(0, 0), ttnn.CoreCoord(6, 6))})
        self.sems = [ttnn.create_global_semaphore(mesh, grid, 0) for _ in range(4)]
        self.i = 0

    def sem(self):
        self.i = (self.i + 1) % len(self.sems)
        return [self.sems[self.i], self.sems[(self.i + 1) % len(self.sems)]]

    def all_reduce(self, x, memory_config=None):
        rs = ttnn.experimental.reduce_scatter_minimal_async(x, dim=3, multi_device_global_semaphore=self.sem(), num_links=1,
                                                            topology=ttnn.Topology.Linear)
        return ttnn.experimental.all_gather_async(rs, dim=3, multi_device_global_semaphore=self.sem(), num_links=1,
                                                  topology=ttnn.Topology.Linear, memory_config=memory_config)


class Transformer:
    def __init__(self, mesh):
        torch.manual_seed(3)
        self.mesh, self.ccl = mesh, CCL(mesh)
        n = mesh.get_num_devices()
        self.q_local, self.kv_local = HEADS // n, KV_HEADS // n
        rep, cols, rows = ttnn.ReplicateTensorToMesh(mesh), ttnn.ShardTensorToMesh(mesh, dim=-1), ttnn.ShardTensorToMesh(mesh, dim=-2)

        def w(shape, mapper, scale=12.0, layout=ttnn.TILE_LAYOUT, dtype=ttnn.bfloat16):
            return ttnn.from_torch(torch.randn(shape) / scale, dtype=dtype, layout=layout, device=mesh, mesh_mapper=mapper)

        self.residual_config = ttnn.create_sharded_memory_config((1, 1, USERS, DIM), ttnn.CoreGrid(y=1, x=4),
                                                                 ttnn.ShardStrategy.WIDTH)
        self.embd = w((VOCAB, DIM), rep, 1.0, ttnn.ROW_MAJOR_LAYOUT)
        self.layers = []
        for _ in range(LAYERS):
            per_chip = []
            wq, wk, wv = torch.randn(DIM, HEADS * HEAD_DIM), torch.randn(DIM, KV_HEADS * HEAD_DIM), torch.randn(DIM, KV_HEADS * HEAD_DIM)
            for c in range(n):
                per_chip.append(torch.cat([wq[:, c * self.q_local * HEAD_DIM:(c + 1) * self.q_local * HEAD_DIM],
                                           wk[:, c * self.kv_local * HEAD_DIM:(c + 1) * self.kv_local * HEAD_DIM],
                                           wv[:, c * self.kv_local * HEAD_DIM:(c + 1) * self.kv_local * HEAD_DIM]], dim=1))
            blocks = USERS * MAX_SEQ // BLOCK
            layer = {
                "wqkv": ttnn.from_torch(torch.cat(per_chip, dim=1) / 12, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT,
                                        device=mesh, mesh_mapper=cols),
                "wo": w((HEADS * HEAD_DIM, DIM), rows), "w1": w((DIM, FF), cols), "w3": w((DIM, FF), cols),
                "w2": w((FF, DIM), rows), "attn_norm": w((1, 1, DIM // 32, 32), rep, 1.0, ttnn.ROW_MAJOR_LAYOUT),
                "ff_norm": w((1, 1, DIM // 32, 32), rep, 1.0, ttnn.ROW_MAJOR_LAYOUT),
                "k_cache": ttnn.from_torch(torch.zeros(blocks, self.kv_local, BLOCK, HEAD_DIM), dtype=ttnn.bfloat16,
                                           layout=ttnn.TILE_LAYOUT, device=mesh, mesh_mapper=rep),
                "v_cache": ttnn.from_torch(torch.zeros(blocks, self.kv_local, BLOCK, HEAD_DIM), dtype=ttnn.bfloat16,
                                           layout=ttnn.TILE_LAYOUT, device=mesh, mesh_mapper=rep),
            }
            self.layers.append(layer)
        self.norm = w((1, 1, DIM // 32, 32), rep, 1.0, ttnn.ROW_MAJOR_LAYOUT)
        self.lm_head = w((DIM, VOCAB), cols)
        pos = torch.arange(MAX_SEQ).float().unsqueeze(1)
        angles = (pos / (10000 ** (torch.arange(0, HEAD_DIM, 2).float() / HEAD_DIM))).repeat_interleave(2, dim=1)
        self.cos = ttnn.from_torch(angles.cos(), dtype=ttnn.bfloat16, layout=ttnn.ROW_MAJOR_LAYOUT, device=mesh, mesh_mapper=rep)
        self.sin = ttnn.from_torch(angles.sin(), dtype=ttnn.bfloat16, layout=ttnn.ROW_MAJOR_LAYOUT, device=mesh, mesh_mapper=rep)
        trans = torch.zeros(1, 1, 32, 32)
        trans[..., torch.arange(0, 32, 2), torch.arange(1, 32, 2)] = 1
        trans[..., torch.arange(1, 32, 2), torch.arange(0, 32, 2)] = -1
        self.trans = ttnn.from_torch(trans, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=mesh, mesh_mapper=rep)

    # --- model.py ------------------------------------------------------------------------
    def prepare_decode_inputs_host(self, tokens, current_pos, page_table):
        rep = ttnn.ReplicateTensorToMesh(self.mesh)
        return [
            ttnn.from_torch(tokens.reshape(1, USERS).int(), dtype=ttnn.uint32, layout=ttnn.ROW_MAJOR_LAYOUT, mesh_mapper=rep),
            ttnn.from_torch(current_pos.int(), dtype=ttnn.int32, layout=ttnn.ROW_MAJOR_LAYOUT, mesh_mapper=rep),
            ttnn.from_torch(current_pos.reshape(1, USERS).int(), dtype=ttnn.uint32, layout=ttnn.ROW_MAJOR_LAYOUT, mesh_mapper=rep),
            ttnn.from_torch(page_table.int(), dtype=ttnn.int32, layout=ttnn.ROW_MAJOR_LAYOUT, mesh_mapper=rep),
        ]

    def transform_decode_inputs_device(self, tokens, current_pos, rot_idxs, page_table):
        x = ttnn.unsqueeze_to_4D(ttnn.embedding(tokens, self.embd, layout=ttnn.TILE_LAYOUT))
        x = ttnn.to_memory_config(x, self.residual_config)
        cos = ttnn.reshape(ttnn.embedding(rot_idxs, self.cos, layout=ttnn.TILE_LAYOUT), [1, USERS, 1, HEAD_DIM])
        sin = ttnn.reshape(ttnn.embedding(rot_idxs, self.sin, layout=ttnn.TILE_LAYOUT), [1, USERS, 1, HEAD_DIM])
        return x, current_pos, rot_idxs, (cos, sin), page_table

    def ttnn_decode_forward(self, x, current_pos, rot_idxs, rot_mats, page_table):
        for layer in self.layers:
            h = ttnn.rms_norm(x, epsilon=1e-5, weight=layer["attn_norm"])
            attn = self.attention(h, layer, current_pos, rot_mats, page_table)
            x = ttnn.add(x, attn, memory_config=self.residual_config)
            h = ttnn.rms_norm(x, epsilon=1e-5, weight=layer["ff_norm"])
            x = ttnn.add(x, self.mlp(h, layer), memory_config=self.residual_config)
        x = ttnn.rms_norm(x, epsilon=1e-5, weight=self.norm)
        logits = ttnn.linear(ttnn.sharded_to_interleaved(x, ttnn.L1_MEMORY_CONFIG), self.lm_head)
        logits = ttnn.experimental.all_gather_async(logits, dim=3, multi_device_global_semaphore=self.ccl.sem(),
                                                    num_links=1, topology=ttnn.Topology.Linear)
        ttnn.plus_one(current_pos)
        ttnn.plus_one(rot_idxs)
        return ttnn.untilize(logits)

    # --- attention.py / mlp.py -------------------------------------------------------------
    def attention(self, x, layer, current_pos, rot_mats, page_table):
        xqkv = ttnn.linear(ttnn.sharded_to_interleaved(x, ttnn.L1_MEMORY_CONFIG), layer["wqkv"])
        q, k, v = ttnn.experimental.nlp_create_qkv_heads_decode(
            xqkv, num_heads=self.q_local, num_kv_heads=self.kv_local, memory_config=ttnn.L1_HEIGHT_SHARDED_MEMORY_CONFIG)
        ttnn.deallocate(xqkv)
        q = ttnn.experimental.rotary_embedding_llama(q, *rot_mats, self.trans, is_decode_mode=True)
        k = ttnn.experimental.rotary_embedding_llama(k, *rot_mats, self.trans, is_decode_mode=True)
        ttnn.experimental.paged_update_cache(layer["k_cache"], k, update_idxs_tensor=current_pos, page_table=page_table)
        ttnn.experimental.paged_update_cache(layer["v_cache"], v, update_idxs_tensor=current_pos, page_table=page_table)
        attn = ttnn.transformer.paged_scaled_dot_product_attention_decode(
            q, layer["k_cache"], layer["v_cache"], page_table, cur_pos_tensor=current_pos, scale=HEAD_DIM ** -0.5,
            memory_config=ttnn.DRAM_MEMORY_CONFIG)
        concat = ttnn.experimental.nlp_concat_heads_decode(attn, num_heads=self.q_local)
        return self.ccl.all_reduce(ttnn.linear(concat, layer["wo"]), memory_config=self.residual_config)

    def mlp(self, x, layer):
        x = ttnn.sharded_to_interleaved(x, ttnn.L1_MEMORY_CONFIG)
        w1_out, w3_out = ttnn.linear(x, layer["w1"]), ttnn.linear(x, layer["w3"])
        ff = ttnn.mul(w1_out, w3_out, input_tensor_a_activations=[ttnn.UnaryOpType.SILU])
        return self.ccl.all_reduce(ttnn.linear(ff, layer["w2"]), memory_config=self.residual_config)


def copy_host_to_device(host_tensors, device_tensors=None, mesh_device=None):
    """tt_transformers/tt/common.py: allocate the device inputs once, later copy into them."""
    if device_tensors is None:
        return [ttnn.to_device(t, mesh_device) for t in host_tensors]
    for host, dev in zip(host_tensors, device_tensors):
        ttnn.copy_host_to_device_tensor(host, dev)
    return device_tensors


class Generator:
    def __init__(self, model, mesh):
        self.model, self.mesh = model, mesh
        self.trace_id = None

    def decode_forward_no_trace(self, tokens, current_pos, page_table):
        device_inputs = copy_host_to_device(self.model.prepare_decode_inputs_host(tokens, current_pos, page_table),
                                            mesh_device=self.mesh)
        transformed = self.model.transform_decode_inputs_device(*device_inputs)
        return self.model.ttnn_decode_forward(*transformed)

    def _capture_trace(self, tokens, current_pos, page_table):
        self.decode_forward_no_trace(tokens, current_pos, page_table)  # compile run
        host_inputs = self.model.prepare_decode_inputs_host(tokens, current_pos, page_table)
        self.device_inputs = copy_host_to_device(host_inputs, mesh_device=self.mesh)
        self.trace_id = ttnn.begin_trace_capture(self.mesh, cq_id=0)
        transformed = self.model.transform_decode_inputs_device(*self.device_inputs)
        self.trace_output = self.model.ttnn_decode_forward(*transformed)
        ttnn.end_trace_capture(self.mesh, self.trace_id, cq_id=0)

    def easy_trace(self, tokens, current_pos, page_table):
        if self.trace_id is None:
            self._capture_trace(tokens, current_pos, page_table)
        host_inputs = self.model.prepare_decode_inputs_host(tokens, current_pos, page_table)
        copy_host_to_device(host_inputs, device_tensors=self.device_inputs)
        ttnn.execute_trace(self.mesh, self.trace_id, cq_id=0, blocking=False)
        return self.trace_output


def _reset_caches(model):
    for layer in model.layers:
        for name in ("k_cache", "v_cache"):
            cache = layer[name]
            ttnn.copy_host_to_device_tensor(
                ttnn.from_torch(torch.zeros(tuple(cache.shape)), dtype=cache.dtype, layout=cache.layout,
                                mesh_mapper=ttnn.ReplicateTensorToMesh(model.mesh)), cache)


@pytest.fixture
def mesh():
    m = ttnn.open_mesh_device(ttnn.MeshShape(1, 2), trace_region_size=2_000_000)
    try:
        yield m
    finally:
        ttnn.close_mesh_device(m)


def _logits(mesh, tt):
    return ttnn.to_torch(tt, mesh_composer=ttnn.ConcatMeshToTensor(mesh, dim=0))


def test_traced_decode_equals_eager_decode_on_a_1x2_mesh(mesh):
    model = Transformer(mesh)
    generator = Generator(model, mesh)
    page_table = torch.randperm(USERS * MAX_SEQ // BLOCK).reshape(USERS, MAX_SEQ // BLOCK)
    first = torch.randint(0, VOCAB, (USERS,))
    steps = 4

    def run(forward):
        tokens, outputs = first, []
        for step in range(steps):
            pos = torch.full((USERS,), step)
            pos[-1] = -1 if step == 0 else step  # an inactive user slot on the first step
            logits = _logits(mesh, forward(tokens, pos, page_table))
            outputs.append(logits)
            tokens = logits[0].reshape(USERS, VOCAB).float().argmax(-1)
        return outputs

    eager = run(generator.decode_forward_no_trace)
    _reset_caches(model)
    generator._capture_trace(first, torch.zeros(USERS, dtype=torch.long), page_table)
    _reset_caches(model)
    traced = run(generator.easy_trace)
    assert len(traced) == steps
    for step, (got, want) in enumerate(zip(traced, eager)):
        assert got.shape == (2, 1, USERS, VOCAB)
        assert torch.equal(got[0], got[1]), "the all-gathered logits must be the same on both chips"
        assert torch.equal(got, want), f"step {step}: traced logits differ from eager"
    assert not torch.equal(eager[0], eager[1])
    caches = [ttnn.get_device_tensors(model.layers[0]["k_cache"])]
    assert not torch.equal(ttnn.to_torch(caches[0][0]), ttnn.to_torch(caches[0][1])), "each chip caches its own heads"
    ttnn.release_trace(mesh, generator.trace_id)
