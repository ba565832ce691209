"""A trace is replayed under another sub-device manager than the one it was captured under (TR009).

What it shows: the program captures its CCL step while its CCL sub-device manager is loaded,
then clears the manager to run some eager work on the whole grid, and replays the trace
without loading the manager again. A trace belongs to the manager active when its capture
began: real ttnn looks it up in the active manager and raises "Trace instance 0 must exist on
Mesh device 0's active sub-device manager 0".
The script catches the error and prints it, then replays correctly after loading the manager.
Fix: load the manager the trace was captured under before execute_trace (and release the
trace before clearing it).
"""

import torch

try:
    import ttnn
except ImportError:  # no ttnn installed: use ttrecord's hardware-free emulator
    from ttrecord import emulator as ttnn

CHIPS = 8


def main():
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(1, CHIPS), trace_region_size=90112)
    grid = mesh.compute_with_storage_grid_size()
    cores = ttnn.CoreRangeSet({ttnn.CoreRange(ttnn.CoreCoord(0, 0), ttnn.CoreCoord(grid.x - 1, grid.y - 1))})
    manager = mesh.create_sub_device_manager([ttnn.SubDevice([cores])], 0)
    mesh.load_sub_device_manager(manager)
    semaphores = [ttnn.create_global_semaphore(mesh, cores, 0) for _ in range(2)]
    x = ttnn.from_torch(torch.rand(1, 1, 32, 32 * CHIPS), device=mesh, layout=ttnn.TILE_LAYOUT,
                        dtype=ttnn.bfloat16, mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=3))

    def step():
        return ttnn.experimental.all_gather_async(x, dim=3, multi_device_global_semaphore=semaphores,
                                                  topology=ttnn.Topology.Ring)

    step()  # compile
    trace_id = ttnn.begin_trace_capture(mesh, cq_id=0)
    step()
    ttnn.end_trace_capture(mesh, trace_id, cq_id=0)

    mesh.clear_loaded_sub_device_manager()  # eager work on the whole grid
    ttnn.to_torch(ttnn.get_device_tensors(x)[0])
    try:
        ttnn.execute_trace(mesh, trace_id, cq_id=0)  # expect: TR009
    except RuntimeError as error:
        print(str(error).splitlines()[2])
    mesh.load_sub_device_manager(manager)
    ttnn.execute_trace(mesh, trace_id, cq_id=0)
    ttnn.release_trace(mesh, trace_id)
    mesh.clear_loaded_sub_device_manager()
    ttnn.close_mesh_device(mesh)


if __name__ == "__main__":
    main()
