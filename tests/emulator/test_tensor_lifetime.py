"""ttnn.Tensor has no weak references and frees its buffer on the last reference, like the real one."""

from __future__ import annotations

import weakref

import pytest
import torch
import wrapt

from ttrecord import emulator as ttnn


def test_tensor_does_not_support_weak_references(device, tile):
    t = tile(device, 1.0)
    with pytest.raises(TypeError, match="cannot create weak reference"):
        weakref.ref(t)
    with pytest.raises(TypeError):
        weakref.finalize(t, lambda: None)


def test_dropping_the_last_reference_frees_the_buffer_without_any_ttnn_call(device, tile):
    """GIVEN a tensor WHEN its last reference goes THEN the next same-size allocation reuses its address."""
    a = tile(device, 1.0)
    address = a.buffer_address()
    alias = a
    del a
    assert len(ttnn._ttnn.reports.get_buffers(device)) == 1  # alias keeps it
    del alias
    assert ttnn._ttnn.reports.get_buffers(device) == []
    assert tile(device, 2.0).buffer_address() == address


def test_deallocate_frees_now_and_marks_the_tensor(device, tile):
    a = tile(device, 1.0)
    a.deallocate(force=True)
    assert not a.is_allocated()
    assert ttnn._ttnn.reports.get_buffers(device) == []
    with pytest.raises(RuntimeError):
        ttnn.to_torch(a)


def test_metadata_methods(device, tile):
    t = tile(device, torch.zeros(64, 96))
    assert t.shape == ttnn.Shape([64, 96]) and list(t.shape) == [64, 96]
    assert (t.dtype, t.layout, t.storage_type()) == (ttnn.bfloat16, ttnn.TILE_LAYOUT, ttnn.StorageType.DEVICE)
    assert t.device() is device and isinstance(t.tensor_id, int)
    assert t.buffer_unique_id() != tile(device, 0.0).buffer_unique_id()
    host = t.cpu()
    assert host.storage_type() == ttnn.StorageType.HOST and host.device() is None
    back = host.to(device)
    assert back.storage_type() == ttnn.StorageType.DEVICE and back.buffer_address() != t.buffer_address()


def test_tensor_methods_can_be_wrapped_with_wrapt(device, tile):
    """A recorder wraps Tensor methods with wrapt.wrap_function_wrapper(ttnn, "Tensor.cpu", ...)."""
    calls = []

    def spy(wrapped, instance, args, kwargs):
        calls.append(instance.tensor_id)
        return wrapped(*args, **kwargs)

    original = ttnn.Tensor.cpu
    try:
        wrapt.wrap_function_wrapper(ttnn, "Tensor.cpu", spy)
        t = tile(device, 1.0)
        t.cpu()
        assert calls == [t.tensor_id]
    finally:
        ttnn.Tensor.cpu = original


def test_ops_are_fast_operations_with_qualified_names():
    assert ttnn.add.python_fully_qualified_name == "ttnn.add"
    assert ttnn.experimental.rotary_embedding.python_fully_qualified_name == "ttnn.experimental.rotary_embedding"
    assert type(ttnn.matmul).__name__ == "FastOperation"


def test_numpy_constructor_and_list_constructor(device):
    import numpy as np

    t = ttnn.Tensor(np.arange(1024, dtype=np.float32).reshape(32, 32), ttnn.float32, device, ttnn.TILE_LAYOUT)
    assert t.cpu().to_list()[1][0] == 32.0
    h = ttnn.Tensor([1.0, 2.0, 3.0, 4.0], [2, 2], ttnn.float32, ttnn.ROW_MAJOR_LAYOUT)
    assert h.to_list() == [[1.0, 2.0], [3.0, 4.0]] and h.storage_type() == ttnn.StorageType.HOST
