"""A global semaphore a trace uses is freed after the capture, then the trace is replayed (TR005).

What it shows: the program makes a fresh pair of global semaphores for every step, as its
eager loop did (tt-metal #40382 / #48469 report hangs from this pattern), and keeps only the
current pair. The trace captured step 0's all-gather, so it baked step 0's semaphore addresses
into its commands; when step 1 rebinds the list, the last references to step 0's semaphores go
and ttnn frees their L1. Every replay then signals and waits on memory that belongs to nobody
(or to a later buffer): on hardware the chips hang or corrupt it. The emulator's collectives do
not wait on semaphores, so the script prints the replayed values, which look right.
Fix: create the semaphores a captured collective uses once, before the capture, and keep them
until the trace is released.
"""

import torch

try:
    import ttnn
except ImportError:  # no ttnn installed: use ttrecord's hardware-free emulator
    from ttrecord import emulator as ttnn

CHIPS, STEPS = 8, 3


def main():
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(1, CHIPS), trace_region_size=90112)
    grid = mesh.compute_with_storage_grid_size()
    cores = ttnn.CoreRangeSet({ttnn.CoreRange(ttnn.CoreCoord(0, 0), ttnn.CoreCoord(grid.x - 1, grid.y - 1))})
    golden = torch.rand(1, 1, 32, 32 * CHIPS).bfloat16()
    x = ttnn.from_torch(golden, device=mesh, layout=ttnn.TILE_LAYOUT, dtype=ttnn.bfloat16,
                        mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=3))
    out = ttnn.from_torch(torch.zeros(1, 1, 32, 32 * CHIPS), device=mesh, layout=ttnn.TILE_LAYOUT,
                          dtype=ttnn.bfloat16, mesh_mapper=ttnn.ReplicateTensorToMesh(mesh))
    semaphores = [ttnn.create_global_semaphore(mesh, cores, 0) for _ in range(2)]

    def step():
        return ttnn.experimental.all_gather_async(x, persistent_output_buffer=out, dim=3,
                                                  multi_device_global_semaphore=semaphores,
                                                  topology=ttnn.Topology.Ring)

    step()  # compile
    trace_id = ttnn.begin_trace_capture(mesh, cq_id=0)
    step()
    ttnn.end_trace_capture(mesh, trace_id, cq_id=0)
    for i in range(STEPS):
        semaphores = [ttnn.create_global_semaphore(mesh, cores, 0) for _ in range(2)]  # expect: TR005
        ttnn.execute_trace(mesh, trace_id, cq_id=0)
        chip0 = ttnn.to_torch(ttnn.get_device_tensors(out)[0])
        print(f"replay {i}: gathered equals every chip's shard: {torch.equal(chip0.bfloat16(), golden)}")
    ttnn.release_trace(mesh, trace_id)
    ttnn.close_mesh_device(mesh)


if __name__ == "__main__":
    main()
