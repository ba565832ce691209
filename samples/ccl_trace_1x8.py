"""A traced async all-gather on a 1x8 mesh with a sub-device manager: zero hazards expected.

Based on tt-metal's nightly CCL trace test
tests/nightly/t3000/ccl/test_minimal_all_gather_async.py@0032d3f6152a109d84d5cb3b705af87d6915d12e
(`run_all_gather_impl` with enable_trace=True), as a plain script on eight chips in a row.
What it shows:
  * a sub-device manager over the whole worker grid is created and loaded, and its stall
    group set, before anything is captured (loading one inside a capture aborts);
  * the global semaphores (two per iteration, as upstream) and the persistent output buffers
    are made once, before the capture, and stay alive while the trace lives: the trace bakes
    their addresses in;
  * the op is run once to compile it, then captured with iteration 0's semaphores and
    persistent buffer, and replayed; every synchronize waits for the stall group only;
  * the trace is released under the manager that captured it, then the stall group is reset
    and the default manager loaded again.
The script prints whether each replay's gathered tensor equals the concatenation of every
chip's shard.
"""

import torch

try:
    import ttnn
except ImportError:  # no ttnn installed: use ttrecord's hardware-free emulator
    from ttrecord import emulator as ttnn

CHIPS, ITERS = 8, 3
SHAPE = [1, 1, 32, 32 * CHIPS]  # the gathered shape; each chip holds 32 columns


def main():
    ttnn.set_fabric_config(ttnn.FabricConfig.FABRIC_1D)
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(1, CHIPS), trace_region_size=90112)
    grid = mesh.compute_with_storage_grid_size()
    cores = ttnn.CoreRangeSet({ttnn.CoreRange(ttnn.CoreCoord(0, 0), ttnn.CoreCoord(grid.x - 1, grid.y - 1))})
    worker = ttnn.SubDeviceId(0)
    stall_group = [worker]
    manager = mesh.create_sub_device_manager([ttnn.SubDevice([cores])], 0)
    mesh.load_sub_device_manager(manager)
    mesh.set_sub_device_stall_group(stall_group)

    semaphores = [[ttnn.create_global_semaphore(mesh, cores, 0) for _ in range(2)] for _ in range(ITERS)]
    dram = ttnn.MemoryConfig(ttnn.TensorMemoryLayout.INTERLEAVED, ttnn.BufferType.DRAM)
    persistent = [
        ttnn.from_torch(torch.zeros(SHAPE), device=mesh, layout=ttnn.TILE_LAYOUT, dtype=ttnn.bfloat16,
                        memory_config=dram, mesh_mapper=ttnn.ReplicateTensorToMesh(mesh))
        for _ in range(ITERS)
    ]
    golden = torch.rand(SHAPE).bfloat16()
    shards = ttnn.from_torch(golden, device=mesh, layout=ttnn.TILE_LAYOUT, dtype=ttnn.bfloat16,
                             memory_config=dram, mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=3))

    def run_op(i):
        return ttnn.experimental.all_gather_async(
            shards, persistent_output_buffer=persistent[i], dim=3, multi_device_global_semaphore=semaphores[i],
            num_links=1, memory_config=dram, topology=ttnn.Topology.Ring, subdevice_id=worker)

    run_op(0)  # compile
    ttnn.synchronize_device(mesh, sub_device_ids=stall_group)
    trace_id = ttnn.begin_trace_capture(mesh, cq_id=0)
    gathered = run_op(0)
    ttnn.end_trace_capture(mesh, trace_id, cq_id=0)
    ttnn.synchronize_device(mesh, sub_device_ids=stall_group)

    for i in range(ITERS):
        ttnn.execute_trace(mesh, trace_id, cq_id=0, blocking=False)
        ttnn.synchronize_device(mesh, sub_device_ids=stall_group)
        chip0 = ttnn.to_torch(ttnn.get_device_tensors(gathered)[0])
        print(f"replay {i}: gathered equals every chip's shard: {torch.equal(chip0.bfloat16(), golden)}")

    ttnn.release_trace(mesh, trace_id)
    mesh.reset_sub_device_stall_group()
    mesh.clear_loaded_sub_device_manager()
    mesh.remove_sub_device_manager(manager)
    ttnn.close_mesh_device(mesh)


if __name__ == "__main__":
    main()
