"""`ttnn.Tensor`: a host value or a view of device memory at a buffer's address.

Like the real nanobind class it has no weak-reference support (`__slots__`
without `__weakref__`) and its device buffer is freed the moment the last
Python reference goes (the buffer object's `__del__`). A device tensor holds no
values of its own: every read decodes the bytes currently at its address.

Reads (device→host) and writes (host→device) check for an active trace capture
on the device and raise real ttnn's TT_FATAL texts.
"""

from __future__ import annotations

import itertools
from typing import Any, Optional
from collections.abc import Sequence

import numpy as np
import torch

from . import errors
from .buffer import BufferDesc, DeviceBuffer
from .codec import TensorSpec, decode, encode, to_storage
from .types import (
    DRAM_MEMORY_CONFIG,
    DataType,
    Layout,
    MemoryConfig,
    Shape,
    StorageType,
    TensorMemoryLayout,
    dtype_from_torch,
    element_size,
)

_tensor_ids = itertools.count()
_INTERLEAVED = TensorMemoryLayout.INTERLEAVED


def check_read(device: Any) -> None:
    """Real ttnn: TT_FATAL 'Reads are not supported during trace capture.'"""
    if device.capturing:
        errors.fatal_in_capture(errors.reads_in_capture())


def check_write(device: Any) -> None:
    """Real ttnn: TT_FATAL 'Writes are not supported during trace capture. trace id: N'"""
    trace = device.active_capture()
    if trace is not None:
        errors.fatal_in_capture(errors.writes_in_capture(trace.trace_id))


class Tensor(errors.NotEmulatedAttributes):
    """A ttnn tensor on the host or on an emulated device."""

    _ttnn_name = "ttnn.Tensor"

    # _host: torch values, or one per chip (a multi-device host tensor); _chip: the one chip
    # of a mesh this tensor stands for (get_device_tensors), None for all of them.
    __slots__ = ("_spec", "_host", "_buffer", "_chip", "tensor_id")
    _spec: TensorSpec
    _host: Any  # torch.Tensor, or a list of them (one per chip) for a multi-device host tensor
    _buffer: DeviceBuffer | None
    _chip: int | None
    tensor_id: int

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        """ttnn 0.81.1's constructors: Tensor(numpy_or_torch, data_type, device, layout,
        mem_config, tile, cq_id, pad_value, mesh_mapper, ...), Tensor(list_of_values, shape,
        data_type, layout[, device][, memory_config][, tile][, pad_value]) and Tensor(tensor)
        (the same storage). With a device the values are written to it (a write)."""
        first = args[0] if args else kwargs.get("data", kwargs.get("tensor", kwargs.get("arg")))
        if "arg" in kwargs or (len(args) == 1 and not kwargs and isinstance(first, Tensor)):
            other: Any = kwargs.get("arg", first)
            self._spec, self._host, self._buffer, self._chip = other._spec, other._host, other._buffer, other._chip
            self.tensor_id = next(_tensor_ids)
            return
        if "shape" in kwargs or "data" in kwargs or (
                len(args) >= 2 and isinstance(first, (list, tuple)) and isinstance(args[1], (list, tuple, Shape))):
            form = _values_form(args, kwargs)
            values = torch.tensor(list(form["data"]), dtype=torch.float32).reshape(tuple(form["shape"]))
            self._build(values, form["data_type"], form["device"], form["layout"], form["memory_config"], None)
            return
        form = _tensor_form(*args, **kwargs)
        data = form["tensor"]
        if isinstance(data, torch.Tensor):
            values = data.detach()
        else:
            values = torch.from_numpy(np.ascontiguousarray(np.asarray(data)))
        dtype = form["dtype"] if form["dtype"] is not None else form["data_type"]
        self._build(values, dtype, form["device"], form["layout"], form["memory_config"] or form["mem_config"],
                    form["mesh_mapper"])

    __init__.overloads = (  # type: ignore[attr-defined]
        lambda arg: None,
        lambda data, shape, data_type, layout, device=None, memory_config=None, tile=None, pad_value=None: None,
        lambda data, shape, data_type, layout, tile=None, pad_value=None: None,
        lambda tensor, data_type=None, device=None, layout=None, mem_config=None, tile=None, cq_id=None,
        pad_value=None, mesh_mapper=None, preserve_nan_values=False, col_tilize=False, enable_bfloat_opt=False, *,
        memory_config=None, dtype=None: None,
    )

    def _build(self, values: torch.Tensor, dtype: Any, device: Any, layout: Any, memory_config: Optional[MemoryConfig],
               mesh_mapper: Any) -> None:
        if dtype is None:
            dtype = dtype_from_torch(values.dtype)
        if layout is None:
            layout = Layout.ROW_MAJOR
        spec = TensorSpec(Shape(values.shape), DataType(dtype), Layout(layout), None)
        host: Any = to_storage(values, spec.dtype).contiguous()
        if mesh_mapper is not None:
            per_chip = mesh_mapper.map(host)
            spec = spec._replace(shape=Shape(per_chip[0].shape))
            host = per_chip if len(per_chip) > 1 else per_chip[0]
        if device is None:
            self._init_host(spec, host)
            return
        check_write(device)
        spec = resolve_memory_config(device, spec._replace(memory_config=memory_config))
        buffer = allocate_for(device, spec)
        self._init_device(spec, buffer)
        if isinstance(host, list):
            for chip, values in enumerate(host):
                device.write_values(buffer.desc, spec, values, chip)
        else:
            write_values(self, host)

    # --- construction without __init__ (used by ops and transfers) -----------------
    def _init_host(self, spec: TensorSpec, values: torch.Tensor | list[torch.Tensor]) -> None:
        self._spec = spec._replace(memory_config=None)
        self._host = values
        self._buffer = None
        self._chip = None
        self.tensor_id = next(_tensor_ids)

    def _init_device(self, spec: TensorSpec, buffer: DeviceBuffer) -> None:
        self._spec = spec
        self._host = None
        self._buffer = buffer
        self._chip = None
        self.tensor_id = next(_tensor_ids)

    @classmethod
    def on_host(cls, spec: TensorSpec, values: torch.Tensor | list[torch.Tensor]) -> Tensor:
        t = cls.__new__(cls)
        t._init_host(spec, values)
        return t

    @classmethod
    def on_device(cls, spec: TensorSpec, buffer: DeviceBuffer) -> Tensor:
        t = cls.__new__(cls)
        t._init_device(spec, buffer)
        return t

    # --- metadata (host-side only: never reads device memory) ------------------------
    @property
    def shape(self) -> Shape:
        return self._spec.shape

    @property
    def logical_shape(self) -> Shape:
        return self._spec.shape

    @property
    def padded_shape(self) -> Shape:
        return self._spec.padded_shape

    @property
    def dtype(self) -> DataType:
        return self._spec.dtype

    @property
    def layout(self) -> Layout:
        return self._spec.layout

    @property
    def spec(self) -> TensorSpec:
        return self._spec

    def get_dtype(self) -> DataType:
        return self._spec.dtype

    def get_layout(self) -> Layout:
        return self._spec.layout

    def memory_config(self) -> MemoryConfig:
        # Host tensors report the default spec (DRAM interleaved), as real ttnn does;
        # storage_type() tells where the tensor actually is.
        return self._spec.memory_config or DRAM_MEMORY_CONFIG

    def storage_type(self) -> StorageType:
        return StorageType.HOST if self._buffer is None else StorageType.DEVICE

    def device(self) -> Any:
        return None if self._buffer is None else self._buffer.device

    def is_allocated(self) -> bool:
        if self._buffer is None:
            return self._host is not None
        return self._buffer.is_allocated

    def is_sharded(self) -> bool:
        return self.memory_config().is_sharded()

    @property
    def num_chips(self) -> int:
        """Chips this tensor has values on (1 for a chip view or a plain host tensor)."""
        if self._chip is not None:
            return 1
        if self._buffer is None:
            return len(self._host) if isinstance(self._host, list) else 1
        return self._buffer.device.num_chips if self._buffer.device is not None else 1

    def _desc(self) -> BufferDesc:
        if self._buffer is None:
            raise RuntimeError("TT_FATAL @ ttnn/core/tensor/tensor.cpp:0: is_device_tensor\ninfo:\nTensor is not on device")
        return self._buffer.desc

    def buffer_address(self) -> int:
        return self._desc().address

    def buffer_num_pages(self) -> int:
        return self._desc().num_pages

    def buffer_page_size(self) -> int:
        return self._desc().page_size

    def buffer_aligned_page_size(self) -> int:
        return self._desc().aligned_page_size

    def buffer_unique_id(self) -> int:
        return self._desc().unique_id

    def element_size(self) -> int:
        return element_size(self._spec.dtype)

    def volume(self) -> int:
        return self._spec.padded_shape.volume()

    def physical_volume(self) -> int:
        return self._spec.padded_shape.volume()

    def logical_volume(self) -> int:
        return self._spec.shape.volume()

    # --- values ------------------------------------------------------------------------
    def _values(self, chip: int = 0) -> torch.Tensor:
        """Current values on `chip` without any capture check (ops reading their inputs)."""
        if self._buffer is None:
            if self._host is None:
                raise RuntimeError("ttnn emulator: tensor was deallocated")
            if isinstance(self._host, list):
                return self._host[chip]
            return self._host
        buffer = self._buffer
        if not buffer.is_allocated:
            raise RuntimeError(
                "TT_FATAL @ ttnn/core/tensor/tensor.cpp:0: is_allocated()\ninfo:\nBuffer is not allocated"
            )
        desc = buffer.desc
        assert buffer.device is not None  # allocated
        return decode(buffer.device.read_pages(desc, chip if self._chip is None else self._chip), self._spec)

    def _chip_values(self) -> list[torch.Tensor]:
        """Values on every chip this tensor spans."""
        return [self._values(chip) for chip in range(self.num_chips)]

    def _read(self, chip: int = 0, cq: Optional[int] = None) -> torch.Tensor:
        """Values for a blocking device→host transfer on `cq` (default 0): forbidden during
        capture; the host waits for everything enqueued on that queue first (queues.py)."""
        if self._buffer is not None:
            device = self._buffer.device
            if device is not None:
                check_read(device)
                queues = device.queues
                if not queues.eager:
                    with device.lock:
                        queues.finish(cq or 0)
        return self._values(chip)

    def _read_all(self, cq: Optional[int] = None) -> list[torch.Tensor]:
        """Every chip's values, for a device→host transfer of a mesh tensor."""
        first = self._read(0, cq)
        return [first] + [self._values(chip) for chip in range(1, self.num_chips)]

    def _to_host(self, blocking: bool = True, cq_id: Optional[int] = None) -> Tensor:
        """A host copy. A non-blocking read is a command on `cq_id`: in the adversarial and
        random queue modes the host tensor holds zeros until the read runs (queues.py)."""
        device = self._buffer.device if self._buffer is not None else None
        if blocking or device is None or device.queues.eager:
            values = [v.clone() for v in self._read_all(cq_id)]
            return Tensor.on_host(self._spec, values if len(values) > 1 else values[0])
        check_read(device)
        zeros = to_storage(torch.zeros(tuple(self.shape)), self._spec.dtype)
        n = self.num_chips
        host = Tensor.on_host(self._spec, [zeros.clone() for _ in range(n)] if n > 1 else zeros)

        def read() -> None:
            values = [self._values(chip).clone() for chip in range(n)]
            host._host = values if n > 1 else values[0]

        with device.lock:
            device.queues.submit(cq_id or 0, read)
        return host

    def cpu(self, blocking: bool = True, cq_id: Optional[int] = None) -> Tensor:
        """Copy to a host tensor (a device read on `cq_id`)."""
        return self._to_host(blocking, cq_id)

    def to_torch(self, mesh_composer: Any = None) -> torch.Tensor:
        if mesh_composer is not None:
            return mesh_composer.compose([v.clone() for v in self._read_all()])
        return self._read().clone()

    def to_numpy(self, mesh_composer: Any = None) -> np.ndarray:
        values = self.to_torch(mesh_composer) if mesh_composer is not None else self._read()
        if values.dtype == torch.bfloat16:
            values = values.float()
        return values.numpy().copy()

    def to_list(self) -> list:
        values = self._read()
        if values.dtype == torch.bfloat16:
            values = values.float()
        return values.tolist()

    def item(self) -> Any:
        values = self._read()
        if values.numel() != 1:
            raise RuntimeError("TT_FATAL @ ttnn/core/tensor/tensor.cpp:0: logical_volume() == 1\ninfo:\nitem() needs a one-element tensor")
        return values.reshape(()).float().item() if values.is_floating_point() else values.reshape(()).item()

    def to(self, *args: Any, **kwargs: Any) -> Tensor:
        """`to(device, mem_config=None, cq_id=None)` copies to a device (a write);
        `to(target_layout)` converts the layout."""
        target = args[0] if args else kwargs.get("device", kwargs.get("target_layout"))
        if isinstance(target, Layout):
            from .ops.data_movement import to_layout

            return to_layout(self, target)
        from .transfers import _host_to_device

        form = _to_device_form(*args, **kwargs)
        return _host_to_device(self, form["device"], form["mem_config"] or form["memory_config"])

    to.overloads = (  # type: ignore[attr-defined]
        lambda self, device, mem_config=None, cq_id=None, *, memory_config=None: None,
        lambda self, target_layout: None,
    )

    def deallocate(self, force: bool = False) -> None:
        """Free the device buffer now (host tensors drop their values)."""
        self._release()

    def _release(self) -> None:
        # Internal callers use this, not deallocate(): a recorder wrapping the public
        # method must see one event per user call.
        if self._buffer is not None:
            self._buffer.release()
        else:
            self._host = None

    # --- host-only padding (tensor_ops.cpp in ttnn 0.81.1) ------------------------------
    def _host_only(self, line: int, what: str) -> torch.Tensor:
        if self._buffer is not None:
            raise errors.tt_fatal("/project/ttnn/core/tensor/tensor_ops.cpp", line, "is_cpu_tensor(input_tensor)",
                                  f"Tensor must be on host for {what}")
        return self._values()

    def _host_like(self, values: torch.Tensor) -> Tensor:
        return Tensor.on_host(self._spec._replace(shape=Shape(values.shape)), values.contiguous())

    def pad(self, output_tensor_shape: Sequence[int], input_tensor_start: Sequence[int], pad_value: float, /) -> Tensor:
        """The tensor placed at `input_tensor_start` of `output_tensor_shape`, `pad_value` elsewhere.
        ttnn 0.81.1 keeps the logical shape (the padding goes to the padded shape), so the values
        read back are that window's top-left corner in the input's shape."""
        values = self._host_only(254, "padding")
        padded = torch.full(tuple(output_tensor_shape), float(pad_value), dtype=values.dtype)
        padded[tuple(slice(int(b), int(b) + n) for b, n in zip(input_tensor_start, values.shape))] = values
        return self._host_like(padded[tuple(slice(0, n) for n in values.shape)])

    def unpad(self, output_tensor_start: Sequence[int], output_tensor_end: Sequence[int], /) -> Tensor:
        """The values from `output_tensor_start` to `output_tensor_end` (exclusive, as measured)."""
        values = self._host_only(277, "unpadding")
        return self._host_like(values[tuple(slice(int(b), int(e)) for b, e in zip(output_tensor_start, output_tensor_end))])

    def pad_to_tile(self, pad_value: float, /) -> Tensor:
        """Tile-padded storage; the logical shape and values stay those of the input."""
        return self._host_like(self._host_only(295, "pad_to_tile conversion").clone())

    def unpad_from_tile(self, output_tensor_shape: Sequence[int], /) -> Tensor:
        values = self._host_only(304, "unpad_from_tile conversion")
        return self._host_like(values[tuple(slice(0, int(n)) for n in output_tensor_shape)])

    def reshape(self, *shape: Any) -> Tensor:
        from .ops.data_movement import reshape

        if len(shape) == 1 and isinstance(shape[0], (list, tuple)):
            shape = tuple(shape[0])
        return reshape(self, shape)

    # --- operators, as ttnn.Tensor forwards them to ttnn ops ---------------------------
    def __getitem__(self, slices: Any) -> Tensor:
        """PyTorch-style indexing, as ttnn.operations.core.__getitem__: ttnn.slice on a device
        tensor (then ttnn.squeeze for every integer index); host tensors take unit steps only."""
        from .ops.indexing import getitem

        return getitem(self, slices)

    def __add__(self, other: Any) -> Tensor:
        from .ops.eltwise import add

        return add(self, other)

    def __sub__(self, other: Any) -> Tensor:
        from .ops.eltwise import subtract

        return subtract(self, other)

    def __mul__(self, other: Any) -> Tensor:
        from .ops.eltwise import multiply

        return multiply(self, other)

    def __matmul__(self, other: Any) -> Tensor:
        from .ops.matmul import matmul

        return matmul(self, other)

    __radd__ = __add__
    __rmul__ = __mul__

    # As in real ttnn, comparisons are ttnn ops (so `t in some_list` runs ttnn.eq and
    # fails for host tensors); hashing stays by identity.
    def __eq__(self, other: Any) -> Tensor:  # type: ignore[override]
        from .ops.eltwise import eq

        return eq(self, other)

    def __ne__(self, other: Any) -> Tensor:  # type: ignore[override]
        from .ops.eltwise import ne

        return ne(self, other)

    def __lt__(self, other: Any) -> Tensor:
        from .ops.eltwise import lt

        return lt(self, other)

    def __gt__(self, other: Any) -> Tensor:
        from .ops.eltwise import gt

        return gt(self, other)

    __hash__ = object.__hash__

    def __repr__(self) -> str:
        # Never reads device memory: a repr inside a capture must not be a readback.
        where = "host" if self._buffer is None else f"device buffer @ {self._buffer.desc.address}"
        return (
            f"ttnn.Tensor(<{where}>, shape={self.shape!r}, dtype={self.dtype!r}, "
            f"layout={self.layout!r})"
        )


def _to_device_form(device: Any, mem_config: Optional[MemoryConfig] = None, cq_id: Optional[int] = None, *,
                    memory_config: Optional[MemoryConfig] = None) -> dict[str, Any]:
    return locals()


def _tensor_form(
    tensor: Any, data_type: Any = None, device: Any = None, layout: Any = None, mem_config: Any = None,
    tile: Any = None, cq_id: Optional[int] = None, pad_value: Optional[float] = None, mesh_mapper: Any = None,
    preserve_nan_values: bool = False, col_tilize: bool = False, enable_bfloat_opt: bool = False, *,
    memory_config: Optional[MemoryConfig] = None, dtype: Any = None,
) -> dict[str, Any]:
    return locals()


def _values_form(args: tuple, kwargs: dict) -> dict[str, Any]:
    """Tensor(data, shape, data_type, layout, ...): after layout, nanobind tells device,
    memory_config, tile and pad_value apart by type, so they are sorted by type here."""
    names = ("data", "shape", "data_type", "layout")
    form: dict[str, Any] = {"device": None, "memory_config": None, "tile": None, "pad_value": None}
    form.update(zip(names, args))
    for extra in args[len(names):]:
        if extra is None:
            continue
        if isinstance(extra, MemoryConfig):
            form["memory_config"] = extra
        elif isinstance(extra, (int, float)):
            form["pad_value"] = extra
        elif hasattr(extra, "allocate_buffer"):
            form["device"] = extra
        else:
            form["tile"] = extra
    form.update(kwargs)
    missing = [n for n in names if n not in form]
    if missing:
        raise TypeError(f"Tensor(): missing {', '.join(missing)}")
    return form


def resolve_memory_config(device: Any, spec: TensorSpec) -> TensorSpec:
    """`spec` with a concrete memory config: DRAM interleaved by default; a sharded config
    given without a shard spec gets one (sharding.default_shard_spec)."""
    memory_config = spec.memory_config
    if memory_config is None:
        return spec._replace(memory_config=DRAM_MEMORY_CONFIG)
    if memory_config.memory_layout is not _INTERLEAVED and memory_config.shard_spec is None:
        from .sharding import default_shard_spec

        shard = default_shard_spec(spec.shape, spec.layout, memory_config.memory_layout, device.config)
        return spec._replace(memory_config=memory_config.with_shard_spec(shard))
    return spec


def allocate_for(device: Any, spec: TensorSpec) -> DeviceBuffer:
    """Allocate the device buffer a tensor of `spec` (resolved) needs: interleaved or sharded."""
    memory_config = spec.memory_config or DRAM_MEMORY_CONFIG
    if memory_config.memory_layout is not _INTERLEAVED:
        from .sharding import placement

        place, page_size, num_pages = placement(
            spec.shape, spec.dtype, spec.layout, memory_config.memory_layout,
            memory_config.buffer_type, memory_config.shard_spec, device.config,
        )
        return device.allocate_buffer(memory_config.buffer_type, num_pages, page_size, place)
    return device.allocate_buffer(memory_config.buffer_type, spec.num_pages(), spec.page_size())


def new_device_tensor(device: Any, spec: TensorSpec) -> Tensor:
    """An allocated, unwritten device tensor (contents: whatever the memory holds)."""
    spec = resolve_memory_config(device, spec)
    return Tensor.on_device(spec, allocate_for(device, spec))


def write_values(tensor: Tensor, values: torch.Tensor, chip: Optional[int] = None) -> None:
    """Store `values` into a device tensor's pages on `chip` (None: every chip it spans;
    no capture check: callers decide)."""
    buffer = tensor._buffer
    assert buffer is not None and buffer.device is not None, "write_values needs a device tensor"
    device = buffer.device
    desc = buffer.desc
    if chip is None and tensor._chip is None and desc.placement is None and len(device.chip_ids) == 1:
        device.write_pages(desc, encode(values, tensor._spec, desc.aligned_page_size))  # the common case
        return
    if tensor._chip is not None:
        chips: Any = (tensor._chip,)
    elif chip is not None:
        chips = (chip,)
    else:
        chips = range(device.num_chips)
    if len(chips) == 1:
        device.write_values(buffer.desc, tensor._spec, values, chips[0])
        return
    pages = device.encode_values(desc, tensor._spec, values)  # the same values on every chip: encoded once
    for c in chips:
        device.write_pages(desc, pages, c)

