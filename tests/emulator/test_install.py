"""`install()` makes `import ttnn` and its submodules resolve to the emulator, which says what it is."""

from __future__ import annotations

import importlib
import sys

import pytest

from ttrecord import emulator


@pytest.fixture
def installed():
    saved = {k: v for k, v in sys.modules.items() if k == "ttnn" or k.startswith("ttnn.")}
    emulator.install()
    try:
        yield
    finally:
        emulator.uninstall()
        sys.modules.update(saved)


def test_import_ttnn_and_submodules_resolve_to_the_emulator(installed):
    import ttnn
    import ttnn.experimental
    from ttnn import add
    from ttnn._ttnn.reports import get_buffers

    assert ttnn is emulator
    assert ttnn.experimental is emulator.experimental
    assert add is emulator.add and get_buffers is emulator._ttnn.reports.get_buffers
    assert importlib.import_module("ttnn.graph") is emulator.graph
    # the native-module paths real ttnn's objects live under
    from ttnn._ttnn.operations.trace import execute_trace
    from ttnn._ttnn.tensor import Tensor

    assert execute_trace is emulator.execute_trace and Tensor is emulator.Tensor


def test_the_emulator_is_honest_about_being_one():
    assert emulator.__emulator__ is True
    assert "emulator" in emulator.__version__ and not emulator.__version__.startswith("0.81")
    device = emulator.open_device(device_id=0)
    try:
        assert "emulated" in repr(device)
        assert device.arch() == emulator.Arch.BLACKHOLE and device.get_num_devices() == 1
    finally:
        emulator.close_device(device)


def test_mesh_devices_and_double_open():
    mesh = emulator.open_mesh_device(emulator.MeshShape(1, 2), trace_region_size=100_000)
    try:
        assert mesh.get_num_devices() == 2 and mesh.get_device_ids() == [0, 1]
        with pytest.raises(RuntimeError, match="already open"):
            emulator.open_device(device_id=1)
    finally:
        emulator.close_mesh_device(mesh)
    emulator.close_device(emulator.open_device(device_id=1))


def test_mesh_ids_follow_real_ttnn_numbering():
    """Measured: open_device returns a submesh (first ids 1, 3, ...: parent and child each take
    an id from one process-wide counter), open_mesh_device takes one id."""
    first = emulator.open_device(device_id=0)
    emulator.close_device(first)
    second = emulator.open_device(device_id=0)
    emulator.close_device(second)
    mesh = emulator.open_mesh_device(emulator.MeshShape(1, 1))
    emulator.close_mesh_device(mesh)
    assert (second.id(), mesh.id()) == (first.id() + 2, first.id() + 3)


def test_enums_are_truthy_like_nanobind_enums():
    assert bool(emulator.ROW_MAJOR_LAYOUT) and bool(emulator.BufferType.DRAM)
    assert (emulator.ROW_MAJOR_LAYOUT or emulator.TILE_LAYOUT) is emulator.ROW_MAJOR_LAYOUT
    assert str(emulator.BufferType.DRAM) == "BufferType.DRAM"


ISSUE_API = """
open_device close_device open_mesh_device close_mesh_device synchronize_device record_event
wait_for_event is_trace_capture_active bfloat16 float32 uint32 int32 ROW_MAJOR_LAYOUT TILE_LAYOUT
DRAM_MEMORY_CONFIG L1_MEMORY_CONFIG Tensor from_torch to_torch from_device to_device
allocate_tensor_on_device copy_host_to_device_tensor copy clone deallocate zeros ones full rand
add subtract multiply matmul linear relu gelu silu exp softmax rms_norm layer_norm embedding
reshape permute transpose concat slice typecast to_layout to_memory_config argmax sum mean
begin_trace_capture end_trace_capture execute_trace release_trace MeshShape BufferType
TensorMemoryLayout StorageType
""".split()
TENSOR_API = """
shape dtype layout memory_config storage_type buffer_address buffer_num_pages buffer_page_size
buffer_aligned_page_size buffer_unique_id element_size volume logical_volume is_allocated device
cpu to_torch to_list item to_numpy to deallocate
""".split()


def test_the_issue_api_surface_exists():
    assert [name for name in ISSUE_API if not hasattr(emulator, name)] == []
    assert [name for name in TENSOR_API if not hasattr(emulator.Tensor, name)] == []
    assert not hasattr(emulator.Tensor, "__weakref__")


def test_replicated_mesh_tensors_and_manage_device():
    import torch

    mesh = emulator.open_mesh_device(emulator.MeshShape(1, 2), trace_region_size=100_000)
    try:
        t = emulator.from_torch(
            torch.ones(32, 32), dtype=emulator.bfloat16, layout=emulator.TILE_LAYOUT, device=mesh,
            mesh_mapper=emulator.ReplicateTensorToMesh(mesh),
        )
        back = emulator.to_torch(t, mesh_composer=emulator.ConcatMeshToTensor(mesh, dim=0))
        assert tuple(back.shape) == (64, 32)
    finally:
        emulator.close_mesh_device(mesh)
    with emulator.manage_device(0) as device:
        assert device.get_num_devices() == 1
    assert not device.is_open
