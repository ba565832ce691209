"""DeepSeek-V3 MLA's paged KV-cache update measured in trace mode: the update is run once
eagerly and checked, then a warm-up trace and a main trace each capture a run of in-place
`paged_update_cache` calls (an L1 cache written through a DRAM page table at per-user positions
held in a DRAM tensor, from a height-sharded L1 update); the warm-up trace is replayed without
blocking and released right after, the main one replayed, synchronized and released.

Upstream: tenstorrent/tt-metal models/demos/deepseek_v3/tests/fused_op_unit_tests/mla/test_paged_update_cache.py@23d5621f86f247d62040aad328d2dee5b14023dd
(test_paged_update_cache with mode="decode", program_cache-trace; paged_update_cache_ttnn,
paged_update_cache_reference and _measure_perf_us(trace_mode=True)).
Changes:
  * the mesh_device fixture (a DeepSeek row of devices) -> one device from ttnn.open_device
    (trace_region_size as upstream's device_params); fabric config, ccl, hf_config, the weight
    cache and pandas / device-perf collection dropped; get_mesh_coords(mesh_shape, row_idx)
    (models/demos/deepseek_v3/utils/config_helpers.py) -> the same set of MeshCoordinate(row_idx, c)
    for the columns of that single-device mesh;
  * MLA1D.create_state / paged_cache_from_torch / MLA1D.create_page_table -> a zero cache of
    [num_blocks, 1, block_size, kvpe_dim] in L1 and a page table giving each user its own blocks
    (identity), made with ttnn.from_torch; torch_cache_from_paged -> the inverse gather; sizes:
    4 users, kvpe_dim 64, 8 blocks of 32 (max_seq_len 64 per user);
  * the update's pad / permute kept; mesh_partition dropped (one device); the kvpe_reshard
    config -> a height-sharded config over 4 cores with [32, kvpe_dim] shards;
  * PERF_WARMUP_ITERS 10 -> 3, PERF_MEASURE_ITERS 100 -> 5; the profiler and benchmark lines
    dropped;
  * upstream compares the cache after the eager call (PCC and assert_close); here the cache is
    compared bit for bit with the reference after the eager call and again after both traces
    (the update is idempotent), exit 1 on a mismatch.
"""

import sys

import torch

import ttnn

USERS_PER_ROW, KVPE_DIM, NUM_BLOCKS, BLOCK_SIZE = 4, 64, 8, 32
MAX_SEQ_LEN = NUM_BLOCKS // USERS_PER_ROW * BLOCK_SIZE
PERF_WARMUP_ITERS = 3
PERF_MEASURE_ITERS = 5


def get_mesh_coords(mesh_shape, row_idx):
    return [ttnn.MeshCoordinate(row_idx, col) for col in range(mesh_shape[1])]


def paged_update_cache_reference(cache, update, update_idxs):
    updated_cache = cache.clone()
    for user_idx, update_idx in enumerate(update_idxs.tolist()):
        if update_idx < 0:
            continue
        updated_cache[user_idx, 0, update_idx : update_idx + 1, :] = update[0, 0, user_idx : user_idx + 1, :]
    return updated_cache


def paged_update_cache_ttnn(kvpe_cache, tt_kvpe, update_idxs_tensor, page_table, mesh_shape, row_idx):
    ttnn.experimental.paged_update_cache(
        kvpe_cache,
        tt_kvpe,
        update_idxs_tensor=update_idxs_tensor,
        page_table=page_table,
        mesh_coords=set(get_mesh_coords(mesh_shape, row_idx)),
    )
    return kvpe_cache


def torch_cache_from_paged(paged, page_table):
    blocks_per_user = page_table.shape[1]
    users = [torch.cat([paged[int(page_table[u, b])] for b in range(blocks_per_user)], dim=1) for u in range(page_table.shape[0])]
    return torch.stack(users)


def _measure_perf_us(mesh_device, op_fn, warmup_iters, measure_iters, trace_mode=False):
    ttnn.synchronize_device(mesh_device)
    if trace_mode:
        op_fn()
        ttnn.synchronize_device(mesh_device)

        if warmup_iters > 0:
            trace_id_warmup = ttnn.begin_trace_capture(mesh_device, cq_id=0)
            for _ in range(warmup_iters):
                op_fn()
            ttnn.end_trace_capture(mesh_device, trace_id_warmup, cq_id=0)
            ttnn.synchronize_device(mesh_device)
            ttnn.execute_trace(mesh_device, trace_id_warmup, blocking=False)
            ttnn.release_trace(mesh_device, trace_id_warmup)
            ttnn.synchronize_device(mesh_device)

        trace_id = ttnn.begin_trace_capture(mesh_device, cq_id=0)
        for _ in range(measure_iters):
            op_fn()
        ttnn.end_trace_capture(mesh_device, trace_id, cq_id=0)
        ttnn.synchronize_device(mesh_device)

        ttnn.execute_trace(mesh_device, trace_id, blocking=False)
        ttnn.synchronize_device(mesh_device)
        ttnn.release_trace(mesh_device, trace_id)


def main():
    mesh_device = ttnn.open_device(device_id=0, trace_region_size=1048576)
    mesh_shape = ttnn.MeshShape(1, 1)
    torch.manual_seed(0)

    torch_cache_row = torch.zeros((USERS_PER_ROW, 1, MAX_SEQ_LEN, KVPE_DIM), dtype=torch.bfloat16)
    torch_page_table = torch.arange(NUM_BLOCKS, dtype=torch.int32).reshape(USERS_PER_ROW, NUM_BLOCKS // USERS_PER_ROW)
    kvpe_cache = ttnn.from_torch(
        torch.zeros((NUM_BLOCKS, 1, BLOCK_SIZE, KVPE_DIM), dtype=torch.bfloat16),
        device=mesh_device,
        dtype=ttnn.bfloat16,
        layout=ttnn.TILE_LAYOUT,
        memory_config=ttnn.L1_MEMORY_CONFIG,
    )
    page_table = ttnn.from_torch(
        torch_page_table, device=mesh_device, dtype=ttnn.int32, memory_config=ttnn.DRAM_MEMORY_CONFIG
    )

    row_idx = 0
    position_idxs = torch.randint(0, MAX_SEQ_LEN - 1, (USERS_PER_ROW,), dtype=torch.int32)
    kvpe_update = torch.randn((1, 1, USERS_PER_ROW, KVPE_DIM), dtype=torch.bfloat16)

    update_idxs_tensor = ttnn.from_torch(position_idxs, device=mesh_device, dtype=ttnn.int32)

    tt_kvpe = ttnn.from_torch(
        kvpe_update,
        device=mesh_device,
        dtype=ttnn.bfloat16,
        layout=ttnn.TILE_LAYOUT,
        memory_config=ttnn.L1_MEMORY_CONFIG,
    )
    tt_kvpe = ttnn.pad(tt_kvpe, [(0, 0), (0, ttnn.TILE_SIZE - 1), (0, 0), (0, 0)], 0)
    tt_kvpe = ttnn.permute(tt_kvpe, (0, 2, 1, 3))
    grid = ttnn.CoreRangeSet({ttnn.CoreRange(ttnn.CoreCoord(0, 0), ttnn.CoreCoord(USERS_PER_ROW - 1, 0))})
    kvpe_reshard = ttnn.MemoryConfig(
        ttnn.TensorMemoryLayout.HEIGHT_SHARDED,
        ttnn.BufferType.L1,
        ttnn.ShardSpec(grid, [ttnn.TILE_SIZE, KVPE_DIM], ttnn.ShardOrientation.ROW_MAJOR),
    )
    tt_kvpe = ttnn.to_memory_config(tt_kvpe, memory_config=kvpe_reshard)

    ref_cache_row = paged_update_cache_reference(torch_cache_row, kvpe_update, position_idxs)

    paged_update_cache_ttnn(kvpe_cache, tt_kvpe, update_idxs_tensor, page_table, mesh_shape, row_idx)
    eager = torch_cache_from_paged(ttnn.to_torch(kvpe_cache), torch_page_table)

    _measure_perf_us(
        mesh_device,
        lambda: paged_update_cache_ttnn(kvpe_cache, tt_kvpe, update_idxs_tensor, page_table, mesh_shape, row_idx),
        PERF_WARMUP_ITERS,
        PERF_MEASURE_ITERS,
        trace_mode=True,
    )
    traced = torch_cache_from_paged(ttnn.to_torch(kvpe_cache), torch_page_table)
    ttnn.close_device(mesh_device)

    same = torch.equal(eager, ref_cache_row) and torch.equal(traced, ref_cache_row)
    print(f"cache == reference after the eager update and after the traces: {same}")
    if not same:
        sys.exit(1)


if __name__ == "__main__":
    main()
