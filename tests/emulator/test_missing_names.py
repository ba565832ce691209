"""Names ttnn 0.81.1 exports that model code calls, emulated with real semantics (values from
torch, allocation through the emulator's allocator), and the one-line NotEmulatedError for the
names and attributes the emulator does not have."""

from __future__ import annotations

import pytest
import torch

from ttrecord import emulator as ttnn

NOT_EMULATED = r"^ttnn emulator: {} is not emulated \(see docs/emulator\.md\)$"


def _dev_tensor(device, values, layout=ttnn.TILE_LAYOUT, dtype=ttnn.float32):
    return ttnn.from_torch(values, dtype=dtype, layout=layout, device=device)


def test_device_is_the_mesh_device_class(device):
    assert ttnn.Device is ttnn.MeshDevice and isinstance(device, ttnn.Device)


def test_arange_forms_values_and_placement(device):
    assert ttnn.to_torch(ttnn.arange(5)).tolist() == [0, 1, 2, 3, 4]
    t = ttnn.arange(2, 11, 3, dtype=ttnn.float32)
    assert t.shape == ttnn.Shape([3]) and t.dtype == ttnn.float32 and t.layout == ttnn.ROW_MAJOR_LAYOUT
    assert ttnn.to_torch(t).tolist() == [2.0, 5.0, 8.0]
    assert ttnn.to_torch(ttnn.arange(0, 10, -1 * -2, dtype=ttnn.int32)).tolist() == [0, 2, 4, 6, 8]
    on_device = ttnn.arange(0, 64, 1, device=device, layout=ttnn.TILE_LAYOUT, memory_config=ttnn.L1_MEMORY_CONFIG)
    assert on_device.storage_type() == ttnn.StorageType.DEVICE
    assert on_device.memory_config().buffer_type == ttnn.BufferType.L1
    assert ttnn.to_torch(on_device).tolist() == list(range(64))
    with pytest.raises(RuntimeError, match="must be non-zero"):
        ttnn.arange(0, 10, 0)


def test_arange_on_a_device_is_a_write_so_it_fails_inside_a_capture(device):
    tid = ttnn.begin_trace_capture(device, cq_id=0)
    with pytest.raises(RuntimeError, match=f"Writes are not supported during trace capture. trace id: {int(tid)}"):
        ttnn.arange(0, 32, 1, device=device)
    ttnn.arange(0, 32, 1)  # a host tensor is no write
    ttnn.end_trace_capture(device, tid, cq_id=0)


def test_pad_takes_both_forms_of_ttnn_0_81_1(device):
    t = _dev_tensor(device, torch.ones(1, 1, 4, 4), layout=ttnn.ROW_MAJOR_LAYOUT)
    by_shape = ttnn.pad(t, [1, 1, 8, 8], [0, 0, 2, 2], 0.5)  # output_padded_shape, input_tensor_start, value
    expected = torch.full((1, 1, 8, 8), 0.5)
    expected[..., 2:6, 2:6] = 1
    assert torch.equal(ttnn.to_torch(by_shape), expected)
    by_keywords = ttnn.pad(t, output_padded_shape=[1, 1, 8, 8], input_tensor_start=[0, 0, 2, 2], value=0.5)
    assert torch.equal(ttnn.to_torch(by_keywords), expected)
    by_pairs = ttnn.pad(t, [(0, 0), (0, 0), (2, 2), (2, 2)], 0.5)
    assert torch.equal(ttnn.to_torch(by_pairs), expected)
    assert ttnn.pad(t, [1, 1, 8, 8], [0, 0, 0, 0], value=0.0).shape == ttnn.Shape([1, 1, 8, 8])


def test_getitem_slices_a_device_tensor_with_slice_and_squeeze(device):
    values = torch.arange(2 * 3 * 64, dtype=torch.float32).reshape(2, 3, 64)
    t = _dev_tensor(device, values, layout=ttnn.ROW_MAJOR_LAYOUT)
    for index in (0, -1, (slice(None), slice(1, 3)), (..., 5), (1, 2), (slice(None), 0, slice(0, 64, 2))):
        out = t[index]
        assert out.storage_type() == ttnn.StorageType.DEVICE
        assert torch.equal(ttnn.to_torch(out), values[index]), index
    t[0]  # the slice program's first call loads its binary
    live = set(device.live_buffers)
    row = t[0]
    assert len(set(device.live_buffers) - live) == 1  # the slice's output; the squeeze is a view of it
    assert torch.equal(ttnn.to_torch(row), values[0])
    host = ttnn.from_torch(values)
    assert torch.equal(ttnn.to_torch(host[1, 1:]), values[1, 1:])
    with pytest.raises(IndexError, match="out of bounds"):
        _ = t[2]
    with pytest.raises(IndexError, match="Too many indices"):
        _ = t[0, 0, 0, 0]
    with pytest.raises(RuntimeError, match="non-unit stride"):
        _ = host[:, ::2]


@pytest.mark.parametrize(
    ("name", "reference"),
    [("add_", torch.add), ("sub_", torch.sub), ("mul_", torch.mul), ("subtract_", torch.sub),
     ("multiply_", torch.mul), ("divide_", torch.div), ("rsub_", lambda a, b: b - a)],
)
def test_in_place_binaries_write_into_a_and_return_it(device, name, reference):
    a_values, b_values = torch.rand(32, 64) + 1, torch.rand(32, 64) + 1
    a, b = _dev_tensor(device, a_values), _dev_tensor(device, b_values)
    address = a.buffer_address()
    out = getattr(ttnn, name)(a, b)
    assert out is a and a.buffer_address() == address
    assert torch.allclose(ttnn.to_torch(a), reference(a_values, b_values), rtol=1e-6)
    scalar = getattr(ttnn, name)(a, 2.0)
    assert scalar is a
    assert torch.allclose(ttnn.to_torch(a), reference(reference(a_values, b_values), 2.0), rtol=1e-6)


def test_in_place_ops_allocate_nothing(device):
    a, b = _dev_tensor(device, torch.rand(32, 32)), _dev_tensor(device, torch.rand(32, 32))
    ttnn.mul_(a, b)  # the first call of a program loads its binary (a buffer of its own)
    ttnn.add_(a, 1.0)
    live = set(device.live_buffers)
    ttnn.mul_(a, b)
    ttnn.add_(a, 1.0)
    assert set(device.live_buffers) == live


def test_div_with_rounding_modes_and_scalar_operands(device):
    a_values, b_values = torch.tensor([[7.0, -7.0, 9.0, 1.0]]), torch.tensor([[2.0, 2.0, -4.0, 3.0]])
    a, b = _dev_tensor(device, a_values), _dev_tensor(device, b_values)
    assert torch.allclose(ttnn.to_torch(ttnn.div(a, b)), a_values / b_values)
    assert torch.equal(ttnn.to_torch(ttnn.div(a, b, rounding_mode="floor")), torch.floor(a_values / b_values))
    assert torch.equal(ttnn.to_torch(ttnn.div(a, b, rounding_mode="trunc")), torch.trunc(a_values / b_values))
    assert torch.allclose(ttnn.to_torch(ttnn.div(a, 2)), a_values / 2)
    assert torch.allclose(ttnn.to_torch(ttnn.div(3.0, b)), 3.0 / b_values)
    ints = _dev_tensor(device, torch.tensor([[7, 8, 9, 10]], dtype=torch.int32), dtype=ttnn.int32)
    assert ttnn.div(ints, 2).dtype == ttnn.float32
    with pytest.raises(RuntimeError, match="Incorrect rounding mode"):
        ttnn.div(a, b, rounding_mode="round")
    ttnn.graph.begin_graph_capture(ttnn.graph.RunMode.NORMAL)
    floor = ttnn.div(a, b, rounding_mode="floor")
    nodes = [(n["node_type"], n["params"]["address"]) for n in ttnn.graph.end_graph_capture()
             if n["node_type"] in ("buffer_allocate", "buffer_deallocate")]
    # as measured on ttnn 0.81.1: the quotient first, then the output, then the quotient freed
    assert [kind for kind, _ in nodes] == ["buffer_allocate", "buffer_allocate", "buffer_deallocate"]
    assert nodes[1][1] == floor.buffer_address() and nodes[0][1] == nodes[2][1] != floor.buffer_address()


def test_softmax_in_place_overwrites_its_input(device):
    values = torch.rand(32, 64)
    t = _dev_tensor(device, values)
    address = t.buffer_address()
    assert ttnn.softmax_in_place(t) is t and t.buffer_address() == address
    assert torch.allclose(ttnn.to_torch(t), torch.softmax(values, dim=-1), atol=1e-6)


def test_reallocate_frees_the_input_then_allocates_the_lowest_free_address(device):
    low = _dev_tensor(device, torch.zeros(32, 32))
    values = torch.rand(32, 32)
    t = _dev_tensor(device, values)
    low_address, old = low.buffer_address(), t.buffer_address()
    ttnn.deallocate(low)
    moved = ttnn.reallocate(t)
    assert moved.buffer_address() == low_address < old  # moved down into the freed space
    assert not t.is_allocated() and torch.equal(ttnn.to_torch(moved), values)
    again = ttnn.reallocate(moved)  # nothing free below: back on its own address, as ttnn 0.81.1
    assert again.buffer_address() == low_address
    into_l1 = ttnn.reallocate(again, ttnn.L1_MEMORY_CONFIG)
    assert into_l1.memory_config().buffer_type == ttnn.BufferType.L1
    assert torch.equal(ttnn.to_torch(into_l1), values)


def test_distribute_sets_the_default_mapper_and_composer():
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(1, 2))
    try:
        values = torch.arange(64.0).reshape(1, 64)
        with ttnn.distribute(ttnn.ShardTensorToMesh(mesh, dim=1)):
            t = ttnn.from_torch(values, device=mesh)
        assert t.shape == ttnn.Shape([1, 32])
        with ttnn.distribute(ttnn.ConcatMeshToTensor(mesh, dim=1)):
            assert torch.equal(ttnn.to_torch(t), values)
        assert torch.equal(ttnn.to_torch(t), values[:, :32])  # restored: chip 0 only
        with pytest.raises(ValueError, match="TensorToMesh or MeshToTensor"), ttnn.distribute(object()):
            pass
    finally:
        ttnn.close_mesh_device(mesh)


def test_fabric_config_and_device_profiler(device):
    assert ttnn.get_fabric_config() == ttnn.FabricConfig.DISABLED
    ttnn.set_fabric_config(ttnn.FabricConfig.FABRIC_1D_RING, ttnn.FabricReliabilityMode.RELAXED_INIT)
    try:
        assert ttnn.get_fabric_config() == ttnn.FabricConfig.FABRIC_1D_RING
    finally:
        ttnn.set_fabric_config(ttnn.FabricConfig.DISABLED)
    assert ttnn.FabricConfig.FABRIC_2D.value == 4  # ttnn 0.81.1's numbering
    assert ttnn.ReadDeviceProfiler(device) is None


def test_missing_attributes_raise_the_one_line_error(device):
    t = _dev_tensor(device, torch.zeros(32, 32))
    cases = [(lambda: t.extract_shard, "ttnn.Tensor.extract_shard"),
             (lambda: device.quiesce_devices, "ttnn.MeshDevice.quiesce_devices"),
             (lambda: ttnn.no_such_op, "ttnn.no_such_op")]
    for get, qualified in cases:
        with pytest.raises(ttnn.NotEmulatedError, match=NOT_EMULATED.format(qualified.replace(".", r"\."))):
            get()
    assert not hasattr(t, "extract_shard") and getattr(device, "get_view", None) is None
    with pytest.raises(AttributeError) as excinfo:
        getattr(t, "_no_such_private")  # noqa: B009 - the attribute access is the test
    assert not isinstance(excinfo.value, ttnn.NotEmulatedError)


def test_host_tensor_padding_methods_match_ttnn_0_81_1():
    """Values measured on ttnn 0.81.1: pad keeps the logical shape (the padding goes to the
    padded shape), unpad's end is exclusive."""
    t = ttnn.Tensor([float(i) for i in range(12)], [1, 1, 3, 4], ttnn.float32, ttnn.ROW_MAJOR_LAYOUT)
    assert t.unpad([0, 0, 1, 1], [1, 1, 3, 3]).to_list() == [[[[5.0, 6.0], [9.0, 10.0]]]]
    padded = t.pad([1, 1, 4, 6], [0, 0, 1, 1], -1.0)
    assert padded.shape == ttnn.Shape([1, 1, 3, 4])
    assert padded.to_list() == [[[[-1.0, -1.0, -1.0, -1.0], [-1.0, 0.0, 1.0, 2.0], [-1.0, 4.0, 5.0, 6.0]]]]
    assert t.pad_to_tile(7.0).unpad_from_tile([1, 1, 2, 2]).to_list() == [[[[0.0, 1.0], [4.0, 5.0]]]]


def test_padding_methods_need_a_host_tensor_and_mesh_devices_have_a_core_grid(device):
    on_device = ttnn.from_torch(torch.zeros(1, 1, 3, 4), device=device)
    with pytest.raises(RuntimeError, match="tensor_ops.cpp:277: is_cpu_tensor.*\ninfo:\nTensor must be on host for unpadding"):
        on_device.unpad([0, 0, 0, 0], [1, 1, 1, 1])
    with pytest.raises(RuntimeError, match="Tensor must be on host for padding"):
        on_device.pad([1, 1, 4, 4], [0, 0, 0, 0], 0.0)
    grid = device.core_grid
    assert (grid.x, grid.y) == (13, 10)  # the p150 compute grid, as ttnn 0.81.1 reports it
    ttnn.relu(on_device)
    assert device.num_program_cache_entries() > 0
    device.clear_program_cache()
    assert device.num_program_cache_entries() == 0


def test_sub_device_ids_are_values_and_sub_device_managers_are_emulated(device):
    assert ttnn.SubDeviceId(0) == ttnn.SubDeviceId(0) != ttnn.SubDeviceId(1)
    assert repr(ttnn.SubDeviceId(1)) == "SubDeviceId(1)"  # as ttnn 0.81.1 prints it
    cores = ttnn.CoreRangeSet({ttnn.CoreRange(ttnn.CoreCoord(0, 0), ttnn.CoreCoord(3, 3))})
    assert ttnn.SubDevice([cores]).cores == [cores]
    manager = device.create_sub_device_manager([ttnn.SubDevice([cores])], 0)
    assert isinstance(manager, ttnn.SubDeviceManagerId)  # the rest: tests/emulator/test_sub_devices.py
    ttnn.synchronize_device(device, sub_device_ids=[ttnn.SubDeviceId(0)])
