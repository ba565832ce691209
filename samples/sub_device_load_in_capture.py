"""A sub-device manager is loaded inside a trace capture: ttnn aborts the capture (TR003).

What it shows: a helper that runs an async all-gather loads the CCL sub-device manager itself
on every call, so when the program captures a step, the load lands between
begin_trace_capture and end_trace_capture. Switching managers resets every command queue's
worker state, which a trace cannot record: real ttnn raises "Cannot reset worker state during
trace capture" there. The load outside the capture (the warm-up step) is fine: the manager
already active is loaded again, which is a no-op.
The script catches the error and prints it.
Fix: load the manager once, before the capture (or split the capture at the switch).
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
    semaphores = [ttnn.create_global_semaphore(mesh, cores, 0) for _ in range(2)]
    x = ttnn.from_torch(torch.rand(1, 1, 32, 32 * CHIPS), device=mesh, layout=ttnn.TILE_LAYOUT,
                        dtype=ttnn.bfloat16, mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=3))

    def step():
        mesh.load_sub_device_manager(manager)  # expect: TR003
        return ttnn.experimental.all_gather_async(x, dim=3, multi_device_global_semaphore=semaphores,
                                                  topology=ttnn.Topology.Ring)

    mesh.clear_loaded_sub_device_manager()
    step()  # warm-up: loads the manager (outside any capture)
    mesh.clear_loaded_sub_device_manager()  # back to the default manager, e.g. for eager work
    trace_id = ttnn.begin_trace_capture(mesh, cq_id=0)
    try:
        step()
    except RuntimeError as error:
        print(str(error).splitlines()[2])
    ttnn.end_trace_capture(mesh, trace_id, cq_id=0)  # the capture is still active: end it
    ttnn.release_trace(mesh, trace_id)
    ttnn.close_mesh_device(mesh)


if __name__ == "__main__":
    main()
