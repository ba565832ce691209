"""An LLM-style traced decode loop on a 1x2 mesh with a paged KV cache: zero hazards expected.

What it shows: the decode-trace pattern of tt-metal's tt_transformers, tensor-parallel on two
chips.
  * attention heads are split over the chips (fused QKV weights sharded by columns, the
    output projection by rows); each chip keeps the K/V pages of its own heads;
  * the KV cache is paged (a page table maps each user's positions to blocks) and updated
    *in place* by paged_update_cache, so the trace writes the same cache buffers every replay;
  * the positions live on the device and advance inside the trace (ttnn.plus_one), so the
    replay attends to one more position each step without any host write;
  * partial attention outputs are summed across the chips (reduce-scatter + all-gather) and
    the vocabulary-sharded logits are all-gathered, inside the trace;
  * each step only writes the new token ids into the captured input and replays.
The traced tokens equal the eager tokens, which the script prints.
"""

import torch

try:
    import ttnn
except ImportError:  # no ttnn installed: use ttrecord's hardware-free emulator
    from ttrecord import emulator as ttnn

USERS, HIDDEN, HEADS, KV_HEADS, HEAD_DIM, VOCAB = 8, 128, 4, 2, 32, 128
BLOCK, BLOCKS_PER_USER, STEPS = 32, 2, 3
CHIPS = 2


def rotation_matrix():
    """The 32x32 matrix rotary_embedding_llama multiplies each head tile by (pairs (a, b) -> (-b, a))."""
    m = torch.zeros(1, 1, 32, 32)
    m[..., torch.arange(0, 32, 2), torch.arange(1, 32, 2)] = 1
    m[..., torch.arange(1, 32, 2), torch.arange(0, 32, 2)] = -1
    return m


class Decoder:
    def __init__(self, mesh):
        self.mesh = mesh
        replicate, by_cols = ttnn.ReplicateTensorToMesh(mesh), ttnn.ShardTensorToMesh(mesh, dim=-1)
        by_rows = ttnn.ShardTensorToMesh(mesh, dim=-2)

        def put(t, mapper, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT):
            return ttnn.from_torch(t, dtype=dtype, layout=layout, device=mesh, mesh_mapper=mapper)

        hd, q_per_chip, kv_per_chip = HEAD_DIM, HEADS // CHIPS, KV_HEADS // CHIPS
        wq, wk, wv = (torch.randn(HIDDEN, n * hd) / 12 for n in (HEADS, KV_HEADS, KV_HEADS))
        fused = [torch.cat([w[:, c * n * hd:(c + 1) * n * hd] for w, n in ((wq, q_per_chip), (wk, kv_per_chip), (wv, kv_per_chip))], dim=1)
                 for c in range(CHIPS)]  # chip c: its q heads | its k head | its v head
        self.wqkv = put(torch.cat(fused, dim=1), by_cols)
        self.wo = put(torch.randn(HEADS * hd, HIDDEN) / 12, by_rows)
        self.lm_head = put(torch.randn(HIDDEN, VOCAB) / 12, by_cols)
        self.embedding = put(torch.randn(VOCAB, HIDDEN), replicate, layout=ttnn.ROW_MAJOR_LAYOUT)
        self.norm = put(torch.ones(1, 1, HIDDEN // 32, 32), replicate, layout=ttnn.ROW_MAJOR_LAYOUT)
        positions = torch.arange(BLOCK * BLOCKS_PER_USER).float().unsqueeze(1)
        freqs = positions / (10000 ** (torch.arange(0, hd, 2).float() / hd))
        angles = freqs.repeat_interleave(2, dim=1)
        self.cos, self.sin = put(angles.cos(), replicate, layout=ttnn.ROW_MAJOR_LAYOUT), put(angles.sin(), replicate, layout=ttnn.ROW_MAJOR_LAYOUT)
        self.trans = put(rotation_matrix(), replicate)
        blocks = USERS * BLOCKS_PER_USER
        self.page_table = put(torch.randperm(blocks).reshape(USERS, BLOCKS_PER_USER).int(), replicate, ttnn.int32, ttnn.ROW_MAJOR_LAYOUT)
        self.k_cache = put(torch.zeros(blocks, kv_per_chip, BLOCK, hd), replicate)
        self.v_cache = put(torch.zeros(blocks, kv_per_chip, BLOCK, hd), replicate)
        self.q_per_chip, self.kv_per_chip = q_per_chip, kv_per_chip
        sem = ttnn.create_global_semaphore(mesh, ttnn.CoreRangeSet({ttnn.CoreRange(ttnn.CoreCoord(0, 0), ttnn.CoreCoord(0, 0))}), 0)
        self.semaphores = [sem]

    def step(self, token_ids, current_pos, rot_idxs):
        """One decode step for every user; advances the device-side positions."""
        x = ttnn.unsqueeze_to_4D(ttnn.embedding(token_ids, self.embedding, layout=ttnn.TILE_LAYOUT))
        h = ttnn.rms_norm(x, epsilon=1e-5, weight=self.norm)
        xqkv = ttnn.linear(h, self.wqkv)
        q, k, v = ttnn.experimental.nlp_create_qkv_heads_decode(xqkv, num_heads=self.q_per_chip, num_kv_heads=self.kv_per_chip)
        cos = ttnn.reshape(ttnn.embedding(rot_idxs, self.cos, layout=ttnn.TILE_LAYOUT), [1, USERS, 1, HEAD_DIM])
        sin = ttnn.reshape(ttnn.embedding(rot_idxs, self.sin, layout=ttnn.TILE_LAYOUT), [1, USERS, 1, HEAD_DIM])
        q = ttnn.experimental.rotary_embedding_llama(q, cos, sin, self.trans, is_decode_mode=True)
        k = ttnn.experimental.rotary_embedding_llama(k, cos, sin, self.trans, is_decode_mode=True)
        ttnn.experimental.paged_update_cache(self.k_cache, k, update_idxs_tensor=current_pos, page_table=self.page_table)
        ttnn.experimental.paged_update_cache(self.v_cache, v, update_idxs_tensor=current_pos, page_table=self.page_table)
        attn = ttnn.transformer.paged_scaled_dot_product_attention_decode(
            q, self.k_cache, self.v_cache, self.page_table, cur_pos_tensor=current_pos, scale=HEAD_DIM ** -0.5)
        partial = ttnn.linear(ttnn.slice(ttnn.experimental.nlp_concat_heads_decode(attn, num_heads=self.q_per_chip), [0, 0, 0, 0], [1, 1, USERS, self.q_per_chip * HEAD_DIM]), self.wo)  # heads come back padded to 32 users
        scattered = ttnn.experimental.reduce_scatter_minimal_async(
            partial, dim=3, multi_device_global_semaphore=self.semaphores, num_links=1, topology=ttnn.Topology.Linear)
        attn_out = ttnn.experimental.all_gather_async(
            scattered, dim=3, multi_device_global_semaphore=self.semaphores, num_links=1, topology=ttnn.Topology.Linear)
        h = ttnn.add(x, attn_out)
        logits = ttnn.linear(ttnn.rms_norm(h, epsilon=1e-5, weight=self.norm), self.lm_head)
        logits = ttnn.experimental.all_gather_async(
            logits, dim=3, multi_device_global_semaphore=self.semaphores, num_links=1, topology=ttnn.Topology.Linear)
        ttnn.plus_one(current_pos)
        ttnn.plus_one(rot_idxs)
        return ttnn.argmax(logits, dim=3, keepdim=True)


def host_ids(mesh, tokens):
    return ttnn.from_torch(tokens.reshape(1, USERS).int(), dtype=ttnn.uint32, layout=ttnn.ROW_MAJOR_LAYOUT,
                           mesh_mapper=ttnn.ReplicateTensorToMesh(mesh))


def host_zeros(mesh, like):
    return ttnn.from_torch(torch.zeros(tuple(like.shape)), dtype=like.dtype, layout=like.layout,
                           mesh_mapper=ttnn.ReplicateTensorToMesh(mesh))


def host_positions(mesh, dtype):
    return ttnn.from_torch(torch.zeros(USERS if dtype == ttnn.int32 else (1, USERS), dtype=torch.int32), dtype=dtype,
                           layout=ttnn.ROW_MAJOR_LAYOUT, mesh_mapper=ttnn.ReplicateTensorToMesh(mesh))


def read_tokens(mesh, tt_tokens):
    return ttnn.to_torch(tt_tokens, mesh_composer=ttnn.ConcatMeshToTensor(mesh, dim=0))[0].reshape(USERS).long()


def main():
    torch.manual_seed(0)
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(1, CHIPS), trace_region_size=400000)
    model = Decoder(mesh)
    first = torch.randint(0, VOCAB, (USERS,))
    ids = ttnn.to_device(host_ids(mesh, first), mesh)
    current_pos = ttnn.to_device(host_positions(mesh, ttnn.int32), mesh)
    rot_idxs = ttnn.to_device(host_positions(mesh, ttnn.uint32), mesh)

    def reset():  # empty cache, position 0, first tokens
        for cache in (model.k_cache, model.v_cache):
            ttnn.copy_host_to_device_tensor(host_zeros(mesh, cache), cache)
        ttnn.copy_host_to_device_tensor(host_positions(mesh, ttnn.int32), current_pos)
        ttnn.copy_host_to_device_tensor(host_positions(mesh, ttnn.uint32), rot_idxs)
        ttnn.copy_host_to_device_tensor(host_ids(mesh, first), ids)

    eager = []
    for _ in range(STEPS):
        tokens = read_tokens(mesh, model.step(ids, current_pos, rot_idxs))
        eager.append(tokens[:4].tolist())
        ttnn.copy_host_to_device_tensor(host_ids(mesh, tokens), ids)

    reset()
    model.step(ids, current_pos, rot_idxs)  # compile run
    reset()
    trace_id = ttnn.begin_trace_capture(mesh, cq_id=0)
    out = model.step(ids, current_pos, rot_idxs)
    ttnn.end_trace_capture(mesh, trace_id, cq_id=0)
    reset()  # the capture ran the step once more: start over

    traced = []
    for _ in range(STEPS):
        ttnn.execute_trace(mesh, trace_id, cq_id=0, blocking=False)
        tokens = read_tokens(mesh, out)
        traced.append(tokens[:4].tolist())
        ttnn.copy_host_to_device_tensor(host_ids(mesh, tokens), ids)

    ttnn.release_trace(mesh, trace_id)
    ttnn.close_mesh_device(mesh)
    print(f"eager tokens (first 4 users):  {eager}")
    print(f"traced tokens (first 4 users): {traced}")
    print(f"traced == eager: {traced == eager}")


if __name__ == "__main__":
    main()
