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
        first = host_tensor._host[0]
        if all(values is first for values in host_tensor._host):  # replicated: encoded once
            write_values(device_tensor, first)
            return
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
    preserve_nan_values: bool = False,
    col_tilize: bool = False,
    enable_bfloat_opt: bool = False,
) -> Tensor:
    """A ttnn tensor from a torch tensor; with `device` it is written to the device (the
    conversion switches `preserve_nan_values`, `col_tilize`, `enable_bfloat_opt` are
    accepted; values convert the one way the emulator has)."""
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
def from_device(
    tensor: Tensor, blocking: bool = True, *, cq_id: Optional[int] = None, queue_id: Optional[int] = None
) -> Tensor:
    """Copy a device tensor to the host (a device read on `cq_id`, also spelled `queue_id`;
    see Tensor.cpu)."""
    cq_id = cq_id if cq_id is not None else queue_id
    if tensor.device() is None:
        return tensor
    return tensor._to_host(blocking, cq_id)


@operation("ttnn.to_device")
def to_device(
    tensor: Tensor, device: Any, memory_config: Optional[MemoryConfig] = None, *, cq_id: Optional[int] = None,
    queue_id: Optional[int] = None,
) -> Tensor:
    """Copy a host tensor to a device (a write)."""
    return _host_to_device(tensor, device, memory_config)


@operation("ttnn.allocate_tensor_on_device")
def allocate_tensor_on_device(
    shape: Any = None,
    dtype: Any = DataType.BFLOAT16,
    layout: Layout = Layout.ROW_MAJOR,
    mesh_device: Any = None,
    memory_config: Optional[MemoryConfig] = None,
    *,
    tensor_spec: Optional[TensorSpec] = None,
) -> Tensor:
    """Allocate without writing: contents are whatever the memory holds. Also
    `allocate_tensor_on_device(tensor_spec, mesh_device)`."""
    if tensor_spec is not None:
        return new_device_tensor(mesh_device if mesh_device is not None else dtype, tensor_spec)
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


def _into(result: Tensor, optional_tensor: Optional[Tensor]) -> Tensor:
    """ttnn's `optional_tensor=`: the values go into that existing tensor, which is returned."""
    if optional_tensor is None:
        return result
    from .ops.data_movement import copy

    copy(result, optional_tensor)
    return optional_tensor


@operation("ttnn.full")
def full(
    shape: Sequence[int],
    fill_value: float,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    memory_config: Optional[MemoryConfig] = None,
    optional_tensor: Optional[Tensor] = None,
) -> Tensor:
    shape = tuple(int(d) for d in shape)
    made = _filled("full", shape, torch.full(shape, float(fill_value)), dtype, layout, device, memory_config)
    return _into(made, optional_tensor)


@operation("ttnn.rand")
def rand(
    shape: Sequence[int],
    device: Any = None,
    *,
    dtype: Any = DataType.BFLOAT16,
    layout: Any = Layout.TILE,
    memory_config: Optional[MemoryConfig] = None,
    low: float = 0.0,
    high: float = 1.0,
    seed: int = 0,
    mesh_mapper: Any = None,
) -> Tensor:
    """Uniform random values in [low, high) (generated on the host, then written)."""
    shape = tuple(int(d) for d in shape)
    generator = torch.Generator().manual_seed(seed) if seed else None
    values = torch.rand(shape, generator=generator) * (high - low) + low
    if mesh_mapper is not None:  # the values are split over the mesh as from_torch splits them
        return from_torch(values, dtype, layout=layout, device=device, memory_config=memory_config,
                          mesh_mapper=mesh_mapper)
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
    def make(
        tensor: Tensor,
        fill_value: float,
        dtype: Any,
        layout: Any,
        device: Any,
        memory_config: Optional[MemoryConfig],
        optional_tensor: Optional[Tensor],
    ) -> Tensor:
        value = fill if fill is not None else float(fill_value)
        return _into(_filled(
            name,
            tuple(tensor.shape),
            torch.full(tuple(tensor.shape), value),
            dtype if dtype is not None else tensor.dtype,
            layout if layout is not None else tensor.layout,
            device if device is not None else tensor.device(),
            memory_config or tensor.memory_config(),
        ), optional_tensor)

    op: Callable[..., Tensor]
    if fill is None:  # full_like(tensor, fill_value, dtype, layout, device, memory_config, optional_tensor)

        def op(tensor: Tensor, fill_value: float, dtype: Any = None, layout: Any = None, device: Any = None,
               memory_config: Optional[MemoryConfig] = None, optional_tensor: Optional[Tensor] = None) -> Tensor:
            return make(tensor, fill_value, dtype, layout, device, memory_config, optional_tensor)
    else:  # zeros_like / ones_like(tensor, dtype, layout, device, memory_config, optional_tensor)

        def op(tensor: Tensor, dtype: Any = None, layout: Any = None, device: Any = None,
               memory_config: Optional[MemoryConfig] = None, optional_tensor: Optional[Tensor] = None) -> Tensor:
            return make(tensor, fill, dtype, layout, device, memory_config, optional_tensor)

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


@operation("ttnn.arange")
def arange(
    start: int = 0,
    end: Optional[int] = None,
    step: int = 1,
    *,
    dtype: Any = DataType.BFLOAT16,
    device: Any = None,
    memory_config: Optional[MemoryConfig] = DRAM_MEMORY_CONFIG,
    layout: Any = Layout.ROW_MAJOR,
) -> Tensor:
    """[start, end) by `step` as a rank-1 tensor (`arange(end)` counts from 0). Built on the
    host and written, so with `device` it is a write (forbidden inside a capture)."""
    if end is None:
        start, end = 0, start
    start, end, step = int(start), int(end), int(step)
    if step == 0 or (end - start) * step < 0:
        raise RuntimeError(
            "TT_FATAL @ ttnn/cpp/ttnn/operations/creation.hpp:0: step != 0 && (end - start) / step >= 0\n"
            f"info:\nThe step {step} must be non-zero and go from start {start} towards end {end}"
        )
    values = torch.arange(start, end, step, dtype=torch.float64)
    return _filled("arange", (len(values),), values, dtype, layout, device, memory_config)
