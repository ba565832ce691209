"""Host↔device transfers and tensor creation.

Every host→device write checks for an active capture and raises real ttnn's
"Writes are not supported during trace capture. trace id: N"; every
device→host read raises "Reads are not supported during trace capture.".
Creating a filled tensor on a device (zeros/ones/full/rand) is a write, as in
ttnn where the values are built on the host and enqueued to the device.
`allocate_tensor_on_device` only allocates, so it is allowed inside a capture.
"""

from __future__ import annotations

from typing import Any, Optional
from collections.abc import Callable, Sequence

import torch

from .codec import TensorSpec, to_storage
from .decorators import FastOperation, operation
from .tensor import Tensor, check_write, new_device_tensor, write_values
from .types import DRAM_MEMORY_CONFIG, DataType, Layout, MemoryConfig, Shape, dtype_from_torch


def _host_to_device(tensor: Tensor, device: Any, memory_config: Optional[MemoryConfig]) -> Tensor:
    if tensor.device() is not None:
        if tensor.device() is device:
            return tensor
        raise RuntimeError("ttnn emulator: tensor is on another device; bring it to the host first")
    check_write(device)
    spec = tensor.spec._replace(memory_config=memory_config or DRAM_MEMORY_CONFIG)
    out = new_device_tensor(device, spec)
    _write_host(out, tensor)
    return out


def _write_host(device_tensor: Tensor, host_tensor: Tensor) -> None:
    """Write a host tensor to a device tensor: per chip when it holds one value per chip."""
    if isinstance(host_tensor._host, list):
        chips = device_tensor.num_chips
        if len(host_tensor._host) != chips:
            raise RuntimeError(
                f"TT_FATAL @ ttnn/core/tensor/tensor.cpp:0: num_shards == num_devices\ninfo:\n"
                f"host tensor has {len(host_tensor._host)} shards, the mesh has {chips} devices"
            )
        for chip, values in enumerate(host_tensor._host):
            write_values(device_tensor, values, chip)
        return
    write_values(device_tensor, host_tensor._values())


@operation("ttnn.from_torch")
def from_torch(
    tensor: torch.Tensor,
    dtype: Optional[DataType] = None,
    *,
    spec: Any = None,
    tile: Any = None,
    pad_value: Optional[float] = None,
    layout: Optional[Layout] = Layout.ROW_MAJOR,
    device: Any = None,
    memory_config: Optional[MemoryConfig] = None,
    mesh_mapper: Any = None,
    cq_id: Optional[int] = None,
) -> Tensor:
    """A ttnn tensor from a torch tensor; with `device` it is written to the device."""
    if device is not None:
        check_write(device)
    dtype = dtype if dtype is not None else dtype_from_torch(tensor.dtype)
    host_spec = TensorSpec(Shape(tensor.shape), DataType(dtype), Layout(layout or Layout.ROW_MAJOR), None)
    values = to_storage(tensor.detach(), host_spec.dtype).contiguous()
    if mesh_mapper is not None:
        per_chip = mesh_mapper.map(values)
        host_spec = host_spec._replace(shape=Shape(per_chip[0].shape))
        host = Tensor.on_host(host_spec, per_chip if len(per_chip) > 1 else per_chip[0])
    else:
        host = Tensor.on_host(host_spec, values)
    if device is None:
        return host
    return _host_to_device(host, device, memory_config)


@operation("ttnn.as_tensor")
def as_tensor(
    tensor: torch.Tensor,
    dtype: Optional[DataType] = None,
    *,
    layout: Optional[Layout] = Layout.ROW_MAJOR,
    device: Any = None,
    memory_config: Optional[MemoryConfig] = None,
    cache_file_name: Any = None,
    preprocess: Any = None,
    mesh_mapper: Any = None,
    **_: Any,
) -> Tensor:
    """from_torch with ttnn's weight-cache arguments (the emulator keeps no cache files)."""
    if preprocess is not None:
        tensor = preprocess(tensor)
    return from_torch(tensor, dtype, layout=layout, device=device, memory_config=memory_config, mesh_mapper=mesh_mapper)


@operation("ttnn.to_torch")
def to_torch(
    tensor: Tensor,
    dtype: Optional[torch.dtype] = None,
    *,
    torch_rank: Optional[int] = None,
    mesh_composer: Any = None,
    device: Any = None,
    cq_id: Optional[int] = None,
) -> torch.Tensor:
    """Values as a torch tensor (a device read when the tensor is on a device)."""
    if mesh_composer is not None:
        values = mesh_composer.compose([v.clone() for v in tensor._read_all(cq_id)])
    else:
        values = tensor._read(0, cq_id).clone()
    if dtype is not None:
        values = values.to(dtype)
    return values


@operation("ttnn.from_device")
def from_device(tensor: Tensor, blocking: bool = True, *, cq_id: Optional[int] = None) -> Tensor:
    """Copy a device tensor to the host (a device read on `cq_id`; see Tensor.cpu)."""
    if tensor.device() is None:
        return tensor
    return tensor._to_host(blocking, cq_id)


@operation("ttnn.to_device")
def to_device(
    tensor: Tensor, device: Any, memory_config: Optional[MemoryConfig] = None, *, cq_id: Optional[int] = None
) -> Tensor:
    """Copy a host tensor to a device (a write)."""
    return _host_to_device(tensor, device, memory_config)


@operation("ttnn.allocate_tensor_on_device")
def allocate_tensor_on_device(
    shape: Any,
    dtype: DataType = DataType.BFLOAT16,
    layout: Layout = Layout.ROW_MAJOR,
    mesh_device: Any = None,
    memory_config: Optional[MemoryConfig] = None,
) -> Tensor:
    """Allocate without writing: contents are whatever the memory holds."""
    if isinstance(shape, TensorSpec):  # allocate_tensor_on_device(spec, device)
        spec, device = shape, dtype
        return new_device_tensor(device, spec)
    spec = TensorSpec(Shape(shape), DataType(dtype), Layout(layout), memory_config or DRAM_MEMORY_CONFIG)
    return new_device_tensor(mesh_device, spec)


@operation("ttnn.copy_host_to_device_tensor")
def copy_host_to_device_tensor(
    host_tensor: Tensor, device_tensor: Tensor, cq_id: Optional[int] = None, **_: Any
) -> None:
    """Write a host tensor's values into an existing device tensor's buffer, in place."""
    device = device_tensor.device()
    if device is None:
        raise RuntimeError("ttnn emulator: copy_host_to_device_tensor needs a device tensor as destination")
    check_write(device)
    if tuple(host_tensor.shape) != tuple(device_tensor.shape):
        raise RuntimeError(
            "TT_FATAL @ ttnn/core/tensor/tensor.cpp:0: host_tensor.logical_shape() == "
            f"device_tensor.logical_shape()\ninfo:\nShape mismatch: {list(host_tensor.shape)} vs "
            f"{list(device_tensor.shape)}"
        )
    # A command on `cq_id`: it runs when the queue gets to it (emulator/queues.py), with the
    # host values as they are now.
    with device.lock:
        device.queues.submit(cq_id or 0, lambda: _write_host(device_tensor, host_tensor))


@operation("ttnn.copy_device_to_host_tensor")
def copy_device_to_host_tensor(
    device_tensor: Tensor, host_tensor: Tensor, blocking: bool = True, cq_id: Optional[int] = None
) -> None:
    """Read a device tensor into an existing host tensor (a device read on `cq_id`)."""
    copy = device_tensor._to_host(blocking, cq_id)
    if copy is device_tensor:
        return
    if blocking or device_tensor.device().queues.eager:
        host_tensor._host = copy._host
        return

    def fill() -> None:  # after the read: the host tensor gets the values that arrived
        host_tensor._host = copy._host

    device = device_tensor.device()
    with device.lock:
        device.queues.submit(cq_id or 0, fill)


@operation("ttnn.deallocate")
def deallocate(tensor: Tensor, force: bool = True) -> None:
    """Free a tensor's device buffer now."""
    tensor._release()


def _filled(
    name: str, shape: Sequence[int], values: torch.Tensor, dtype: Any, layout: Any, device: Any, memory_config: Any
) -> Tensor:
    dtype = DataType(dtype) if dtype is not None else DataType.BFLOAT16
    layout = Layout(layout) if layout is not None else Layout.ROW_MAJOR
    if device is not None:
        check_write(device)
    spec = TensorSpec(Shape(shape), dtype, layout, None)
    host = Tensor.on_host(spec, to_storage(values, dtype).contiguous())
    if device is None:
        return host
    return _host_to_device(host, device, memory_config)


def _creation(name: str, make: Callable[[tuple[int, ...], dict[str, Any]], torch.Tensor]) -> FastOperation:
    def op(
        shape: Sequence[int],
        dtype: Any = None,
        layout: Any = None,
        device: Any = None,
        memory_config: Optional[MemoryConfig] = None,
        **kwargs: Any,
    ) -> Tensor:
        shape = tuple(int(d) for d in shape)
        return _filled(name, shape, make(shape, kwargs), dtype, layout, device, memory_config)

    op.__name__ = name
    op.__doc__ = f"ttnn.{name}(shape, dtype, layout, device, memory_config): a write when on a device."
    return operation(f"ttnn.{name}")(op)


zeros = _creation("zeros", lambda shape, kw: torch.zeros(shape))
ones = _creation("ones", lambda shape, kw: torch.ones(shape))
empty = _creation("empty", lambda shape, kw: torch.zeros(shape))


@operation("ttnn.full")
def full(
    shape: Sequence[int],
    fill_value: float,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    memory_config: Optional[MemoryConfig] = None,
) -> Tensor:
    shape = tuple(int(d) for d in shape)
    return _filled("full", shape, torch.full(shape, float(fill_value)), dtype, layout, device, memory_config)


@operation("ttnn.rand")
def rand(
    shape: Sequence[int],
    *,
    dtype: Any = DataType.BFLOAT16,
    layout: Any = Layout.TILE,
    device: Any = None,
    memory_config: Optional[MemoryConfig] = None,
    low: float = 0.0,
    high: float = 1.0,
    seed: int = 0,
) -> Tensor:
    """Uniform random values in [low, high) (generated on the host, then written)."""
    shape = tuple(int(d) for d in shape)
    generator = torch.Generator().manual_seed(seed) if seed else None
    values = torch.rand(shape, generator=generator) * (high - low) + low
    scratch = None
    if device is not None and Layout(layout) == Layout.ROW_MAJOR:
        # generated in TILE layout, then untilized: the tiled values are an intermediate
        # (ttnn 0.81.1, measured)
        tiled = TensorSpec(Shape(shape), DataType(dtype), Layout.TILE, memory_config or DRAM_MEMORY_CONFIG)
        scratch = new_device_tensor(device, tiled)
    out = _filled("rand", shape, values, dtype, layout, device, memory_config)
    if scratch is not None:
        scratch._release()
    return out


def _like(name: str, fill: Optional[float]) -> FastOperation:
    def op(
        tensor: Tensor,
        fill_value: float = 0.0,
        *,
        dtype: Any = None,
        layout: Any = None,
        device: Any = None,
        memory_config: Optional[MemoryConfig] = None,
    ) -> Tensor:
        value = fill if fill is not None else float(fill_value)
        return _filled(
            name,
            tuple(tensor.shape),
            torch.full(tuple(tensor.shape), value),
            dtype if dtype is not None else tensor.dtype,
            layout if layout is not None else tensor.layout,
            device if device is not None else tensor.device(),
            memory_config or tensor.memory_config(),
        )

    op.__name__ = name
    return operation(f"ttnn.{name}")(op)


zeros_like = _like("zeros_like", 0.0)
ones_like = _like("ones_like", 1.0)
full_like = _like("full_like", None)


def is_tensor_storage_on_device(tensor: Tensor) -> bool:
    return tensor.device() is not None


def get_memory_config(tensor: Tensor) -> Optional[MemoryConfig]:
    """The tensor's memory config if it is on a device, else None (as ttnn.get_memory_config)."""
    return tensor.memory_config() if tensor.device() is not None else None
