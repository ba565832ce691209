"""Sub-device managers and global semaphores on the emulator, as tt-metal's
sub_device_manager_tracker.cpp and mesh_device.cpp define them (the texts are ttnn 0.81.1's,
read from its libtt_metal.so): a trace belongs to the manager active at its capture."""

import pytest
import torch

from ttrecord import emulator as ttnn


@pytest.fixture
def mesh():
    m = ttnn.open_mesh_device(ttnn.MeshShape(1, 8), trace_region_size=90112)
    yield m
    ttnn.close_mesh_device(m)


def _manager(mesh):
    grid = mesh.compute_with_storage_grid_size()
    cores = ttnn.CoreRangeSet({ttnn.CoreRange(ttnn.CoreCoord(0, 0), ttnn.CoreCoord(grid.x - 1, grid.y - 1))})
    return mesh.create_sub_device_manager([ttnn.SubDevice([cores])], 0)


def _capture(mesh):
    x = ttnn.from_torch(torch.ones(1, 1, 32, 256), device=mesh, layout=ttnn.TILE_LAYOUT, dtype=ttnn.bfloat16,
                        mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=3))
    ttnn.relu(x)
    tid = ttnn.begin_trace_capture(mesh, cq_id=0)
    ttnn.relu(x)
    ttnn.end_trace_capture(mesh, tid, cq_id=0)
    return tid


def test_a_switch_inside_a_capture_raises_and_loading_the_active_one_does_not(mesh):
    manager = _manager(mesh)
    mesh.load_sub_device_manager(manager)
    tid = ttnn.begin_trace_capture(mesh, cq_id=0)
    mesh.load_sub_device_manager(manager)  # already active: tt-metal returns before any reset
    with pytest.raises(RuntimeError, match="Cannot reset worker state during trace capture"):
        mesh.clear_loaded_sub_device_manager()
    ttnn.end_trace_capture(mesh, tid, cq_id=0)  # the capture survived the refused switch
    ttnn.release_trace(mesh, tid)
    mesh.clear_loaded_sub_device_manager()


def test_a_trace_replays_and_releases_only_under_its_manager(mesh):
    manager = _manager(mesh)
    mesh.load_sub_device_manager(manager)
    tid = _capture(mesh)
    mesh.clear_loaded_sub_device_manager()
    with pytest.raises(RuntimeError, match=f"Trace instance {tid} must exist on Mesh device {mesh.mesh_id}'s"
                                           " active sub-device manager 0"):
        ttnn.execute_trace(mesh, tid, cq_id=0)
    ttnn.release_trace(mesh, tid)  # finds nothing under the default manager: the trace stays
    assert int(tid) in mesh.traces
    mesh.load_sub_device_manager(manager)
    ttnn.execute_trace(mesh, tid, cq_id=0)
    ttnn.release_trace(mesh, tid)
    assert int(tid) not in mesh.traces


def test_ending_a_capture_under_another_manager_raises(mesh, monkeypatch):
    # keep-going mode lets the refused load through (as a warning), so the capture ends under it
    monkeypatch.setenv(ttnn.errors.KEEP_GOING_ENV, "1")
    manager = _manager(mesh)
    tid = ttnn.begin_trace_capture(mesh, cq_id=0)
    with pytest.warns(ttnn.errors.FatalInCapture, match="Cannot reset worker state during trace capture"):
        mesh.load_sub_device_manager(manager)
    with pytest.raises(RuntimeError, match=f"Trace instance {tid} must exist on device {mesh.mesh_id}'s active"
                                           f" sub-device manager {int(manager)}"):
        ttnn.end_trace_capture(mesh, tid, cq_id=0)
    with pytest.warns(ttnn.errors.FatalInCapture):  # the capture is still active: refused again
        mesh.clear_loaded_sub_device_manager()
    ttnn.end_trace_capture(mesh, tid, cq_id=0)
    ttnn.release_trace(mesh, tid)


def test_removing_a_manager_drops_its_traces_and_refuses_the_active_and_default(mesh):
    manager = _manager(mesh)
    mesh.load_sub_device_manager(manager)
    tid = _capture(mesh)
    with pytest.raises(RuntimeError, match=f"Cannot remove active sub device manager {int(manager)}"):
        mesh.remove_sub_device_manager(manager)
    size = mesh.trace_buffers_size
    assert size > 0
    mesh.clear_loaded_sub_device_manager()
    mesh.remove_sub_device_manager(manager)
    assert int(tid) not in mesh.traces and mesh.trace_buffers_size == 0
    with pytest.raises(RuntimeError, match="Sub device manager does not exist"):
        mesh.load_sub_device_manager(manager)


def test_stall_groups_are_checked_against_the_active_manager(mesh):
    mesh.load_sub_device_manager(_manager(mesh))
    mesh.set_sub_device_stall_group([ttnn.SubDeviceId(0)])
    with pytest.raises(RuntimeError, match="SubDevice index 1 out of bounds 1"):
        mesh.set_sub_device_stall_group([ttnn.SubDeviceId(1)])
    with pytest.raises(RuntimeError, match="sub_device_ids to stall must not be empty"):
        mesh.set_sub_device_stall_group([])
    mesh.reset_sub_device_stall_group()
    mesh.clear_loaded_sub_device_manager()


def test_global_semaphores_have_distinct_addresses_and_keep_their_value(mesh):
    cores = ttnn.CoreRangeSet({ttnn.CoreRange(ttnn.CoreCoord(0, 0), ttnn.CoreCoord(1, 1))})
    a, b = (ttnn.create_global_semaphore(mesh, cores, 0) for _ in range(2))
    assert ttnn.get_global_semaphore_address(a) != ttnn.get_global_semaphore_address(b)
    ttnn.reset_global_semaphore_value(a, 3)
    assert a.value == 3 and b.value == 0
