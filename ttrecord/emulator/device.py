"""Emulated (mesh) devices: address spaces, allocation, open/close, synchronization.

A `MeshDevice` owns one allocator per buffer type and, per chip, the bytes behind
them. A mesh of N chips allocates in lockstep (as tt-metal's mesh allocator does:
every chip gets the same address, so one allocator stands for N identical ones)
while each chip has its own memory: a tensor sharded over the mesh holds different
values on each chip at the same address.
"""

from __future__ import annotations

import enum
import itertools
import os
import threading

import numpy as np
from typing import TYPE_CHECKING, Any, Optional
from collections.abc import Iterable

from . import errors, program_cache
from .errors import NotEmulatedEnumType
from .allocator import BankAllocator, round_up, size_per_bank
from .buffer import BufferDesc, DeviceBuffer
from .config import (
    DEFAULT_L1_SMALL_SIZE,
    DEFAULT_TRACE_REGION_SIZE,
    DEFAULT_WORKER_L1_SIZE,
    P150,
    DeviceConfig,
)
from .codec import TensorSpec, decode, encode
from .memory import BankedMemory
from .tools import trace_allocation_tracker as _tracker
from .queues import CommandQueues, queues_of
from .sharding import CoreCoord
from .types import BufferType, MeshShape

if TYPE_CHECKING:
    import torch

# The emulated host: TTRECORD_EMULATOR_SYSTEM, read whenever a device is opened or the
# devices are counted, names its system mesh. Default: 32 p150 chips as an 8×4 Galaxy, so
# any mesh up to 8×4 (a 1×8 T3K line, a 2×4, …) opens; each chip's memory costs nothing until
# a buffer on it is written.
SYSTEM_ENV_VAR = "TTRECORD_EMULATOR_SYSTEM"
SYSTEMS = {"galaxy": (8, 4), "t3k": (2, 4), "p150x4": (1, 4), "p150x2": (1, 2), "p150": (1, 1)}
DEFAULT_SYSTEM = "galaxy"


def system_mesh_shape() -> tuple[int, int]:
    """(rows, columns) of the emulated host's chips: a SYSTEMS name or `RxC`."""
    value = os.environ.get(SYSTEM_ENV_VAR, "").strip().lower() or DEFAULT_SYSTEM
    if value in SYSTEMS:
        return SYSTEMS[value]
    rows, sep, cols = value.partition("x")
    if sep and rows.isdigit() and cols.isdigit() and int(rows) * int(cols) > 0:
        return int(rows), int(cols)
    raise RuntimeError(
        f"ttnn emulator: {SYSTEM_ENV_VAR}={value!r} is not a system; use one of "
        f"{', '.join(SYSTEMS)} or ROWSxCOLS (e.g. 8x4)"
    )


def emulated_num_devices() -> int:
    rows, cols = system_mesh_shape()
    return rows * cols


class Arch(enum.Enum, metaclass=NotEmulatedEnumType):
    GRAYSKULL = 1
    WORMHOLE_B0 = 2
    BLACKHOLE = 3
    QUASAR = 4


_open_chips: dict[int, MeshDevice] = {}
# Active ttnn.graph captures; each gets on_allocate/on_deallocate for every buffer.
GRAPH_LISTENERS: list[Any] = []
_registry_lock = threading.Lock()
# Real ttnn numbers meshes from one counter: open_device makes a parent mesh and a 1x1
# submesh and returns the submesh (ids 1, 3, ...), open_mesh_device takes one id.
_mesh_ids = itertools.count()


class MeshDevice(errors.NotEmulatedAttributes):
    """A mesh of emulated chips with real allocation and memory semantics."""

    _ttnn_name = "ttnn.MeshDevice"

    def __init__(
        self,
        mesh_shape: MeshShape,
        chip_ids: list[int],
        *,
        mesh_id: int,
        l1_small_size: int = DEFAULT_L1_SMALL_SIZE,
        trace_region_size: int = DEFAULT_TRACE_REGION_SIZE,
        worker_l1_size: int = DEFAULT_WORKER_L1_SIZE,
        num_command_queues: int = 1,
        config: DeviceConfig = P150,
        chip_memories: Optional[list[dict[BufferType, BankedMemory]]] = None,
    ) -> None:
        self.config = config
        self.worker_l1_size = worker_l1_size
        self.submeshes: list[MeshDevice] = []
        self.mesh_shape = mesh_shape
        self.chip_ids = chip_ids
        self.mesh_id = mesh_id
        self.l1_small_size = l1_small_size
        self.trace_region_size = trace_region_size
        # trace_region_size=0 while capturing: the highest DRAM end (per bank) allocated and
        # freed since begin_trace_capture (tt-metal's DRAM high-water-mark tracking)
        self.dram_marks: Optional[list[int]] = None
        self.num_command_queues = num_command_queues
        self.queues = CommandQueues(num_command_queues)  # emulator/queues.py: CQ modes
        self.is_open = True
        self.lock = threading.RLock()
        # trace_region_size is split over the DRAM banks and taken from their top;
        # the L1_SMALL region is taken from the top of every L1 bank.
        trace_per_bank = trace_region_size // config.num_dram_banks
        dram_top = config.dram_bank_size - trace_per_bank
        l1_top = (worker_l1_size or config.worker_l1_size) - l1_small_size
        self.l1_top = l1_top
        self.allocators = {
            BufferType.DRAM: BankAllocator(
                "DRAM", config.dram_unreserved_base, dram_top, config.dram_alignment, top_down=False
            ),
            # Pages are 16-byte aligned in L1, but the allocator hands out multiples of the
            # larger (DRAM) alignment in every bank (ttnn 0.81.1, measured: a 16-byte L1
            # buffer takes 64 bytes)
            BufferType.L1: BankAllocator(
                "L1", config.l1_unreserved_base, l1_top, max(config.l1_alignment, config.dram_alignment), top_down=True
            ),
            BufferType.TRACE: BankAllocator(
                "TRACE", dram_top, config.dram_bank_size, config.dram_alignment, top_down=False
            ),
        }
        # A submesh shares its parent's chips, so it is handed their memories.
        self.chip_memories = chip_memories if chip_memories is not None else [
            {
                BufferType.DRAM: BankedMemory(config.num_dram_banks, config.dram_unreserved_base, dram_top),
                BufferType.L1: BankedMemory(config.num_l1_banks, config.l1_unreserved_base, l1_top),
            }
            for _ in chip_ids
        ]
        self.memories = self.chip_memories[0]
        self.live_buffers: dict[int, BufferDesc] = {}
        self.op_owned: dict[str, DeviceBuffer] = {}  # buffers ops keep across calls
        self._busy = 0
        self._deferred_frees: list[BufferDesc] = []
        # Trace state (driven by trace.py): the capture in progress per cq, the
        # captured traces, whether allocations are unsafe (a trace was captured
        # and not every trace is released yet), and the trace buffer bytes used.
        self.capturing: dict[int, Any] = {}
        self.traces: dict[int, Any] = {}
        self.allocations_unsafe = False
        self.trace_buffers_size = 0
        # tools/trace_allocation_tracker: trace id -> {buffer unique id: allocation context}
        self.unsafe_tracked: dict[int, dict[int, str]] = {}
        self.corruptible_scopes = 0

    # --- identity -----------------------------------------------------------------
    def id(self) -> int:
        return self.mesh_id

    def arch(self) -> Arch:
        return Arch[self.config.arch]

    def get_num_devices(self) -> int:
        return len(self.chip_ids)

    def get_device_ids(self) -> list[int]:
        return list(self.chip_ids)

    @property
    def shape(self) -> MeshShape:
        return self.mesh_shape

    def compute_with_storage_grid_size(self) -> CoreCoord:
        return CoreCoord(*self.config.compute_grid)

    @property
    def core_grid(self) -> Any:
        """The compute grid as a ttnn.CoreGrid (13×10 on a p150)."""
        from .types import CoreGrid

        x, y = self.config.compute_grid
        return CoreGrid(y=y, x=x)

    def clear_program_cache(self) -> None:
        """Empties the program cache (emulator/program_cache.py): every op compiles again."""
        program_cache.clear(self)

    def dram_grid_size(self) -> CoreCoord:
        return CoreCoord(self.config.num_dram_banks, 1)

    def num_dram_channels(self) -> int:
        return self.config.num_dram_banks

    def enable_program_cache(self) -> None:
        """Program caching is a dispatch-speed feature; nothing to emulate."""

    def disable_and_clear_program_cache(self) -> None:
        """Empties the program cache (emulator/program_cache.py): every op compiles again."""
        program_cache.clear(self)

    # --- submeshes ----------------------------------------------------------------------
    def create_submesh(self, submesh_shape: MeshShape, offset: Any = None) -> MeshDevice:
        """A mesh over the `submesh_shape` block of this mesh's chips at `offset` (row, column).
        As measured on ttnn 0.81.1 (two mocked p150s): a submesh has allocators of its own,
        starting empty, so its buffers take addresses the parent's live buffers hold on the
        same chips; it shares the chips' memory with the parent and the other submeshes."""
        rows, cols = _rows_cols(self.mesh_shape)
        sub_rows, sub_cols = _rows_cols(submesh_shape)
        row0, col0 = (0, 0) if offset is None else (int(offset[0]), int(offset[1]))
        if row0 + sub_rows > rows or col0 + sub_cols > cols:
            raise RuntimeError(
                f"TT_FATAL @ tt_metal/distributed/mesh_device.cpp:0: submesh fits the mesh\ninfo:\n"
                f"Submesh {sub_rows}x{sub_cols} at ({row0}, {col0}) does not fit a {rows}x{cols} mesh")
        indices = [r * cols + c for r in range(row0, row0 + sub_rows) for c in range(col0, col0 + sub_cols)]
        with _registry_lock:
            mesh_id = next(_mesh_ids)
        submesh = MeshDevice(
            MeshShape(sub_rows, sub_cols),
            [self.chip_ids[i] for i in indices],
            mesh_id=mesh_id,
            l1_small_size=self.l1_small_size,
            trace_region_size=self.trace_region_size,
            worker_l1_size=self.worker_l1_size,
            num_command_queues=self.num_command_queues,
            config=self.config,
            chip_memories=[self.chip_memories[i] for i in indices],
        )
        self.submeshes.append(submesh)
        return submesh

    def create_submeshes(self, submesh_shape: MeshShape) -> list[MeshDevice]:
        """This mesh tiled by `submesh_shape` blocks, in row-major order."""
        rows, cols = _rows_cols(self.mesh_shape)
        sub_rows, sub_cols = _rows_cols(submesh_shape)
        if rows % sub_rows or cols % sub_cols:
            raise RuntimeError(
                f"TT_FATAL @ tt_metal/distributed/mesh_device.cpp:0: mesh divisible by submesh\ninfo:\n"
                f"A {rows}x{cols} mesh cannot be split into {sub_rows}x{sub_cols} submeshes")
        return [self.create_submesh(submesh_shape, (r, c))
                for r in range(0, rows, sub_rows) for c in range(0, cols, sub_cols)]

    def get_submeshes(self) -> list[MeshDevice]:
        return list(self.submeshes)

    def num_program_cache_entries(self) -> int:
        return program_cache.entries(self)

    def __repr__(self) -> str:
        shape = f"{self.mesh_shape[0]}x{self.mesh_shape[1]}" if len(self.mesh_shape) == 2 else "?"
        return f"MeshDevice(id={self.mesh_id}, {shape} emulated {self.config.arch.lower()} {self.config.name})"

    # --- trace helpers used across modules ----------------------------------------
    def active_capture(self) -> Optional[Any]:
        """The trace being captured on any command queue of this device, if any."""
        if not self.capturing:
            return None
        return next(iter(self.capturing.values()))

    # --- allocation -----------------------------------------------------------------
    @property
    def num_chips(self) -> int:
        return len(self.chip_ids)

    def allocate_buffer(
        self, buffer_type: BufferType, num_pages: int, page_size: int, placement: Any = None,
        top_down: Optional[bool] = None,
    ) -> DeviceBuffer:
        """Allocate a buffer of `num_pages` pages of `page_size` bytes: interleaved, or
        sharded when `placement` (sharding.Placement) says where each page goes; `top_down`
        overrides the buffer type's direction (kernel binaries: top-down DRAM)."""
        if not self.is_open:
            raise RuntimeError("ttnn emulator: device is closed")
        if self.allocations_unsafe and buffer_type != BufferType.TRACE:
            errors.warn_unsafe_allocation()
        config = self.config
        if buffer_type == BufferType.L1:
            banks, alignment = config.num_l1_banks, config.l1_alignment
        else:
            banks, alignment = config.num_dram_banks, config.dram_alignment
        aligned_page = round_up(page_size, alignment)
        if placement is not None:
            per_bank = round_up(placement.pages_per_shard * aligned_page, alignment)
        else:
            per_bank = size_per_bank(num_pages, aligned_page, banks, alignment)
        allocator = self.allocators[buffer_type]
        if buffer_type == BufferType.TRACE and self.trace_region_size == 0:
            # Measured on ttnn 0.81.1: with no trace region an (empty) trace buffer is
            # placed at the top of DRAM and reported as a DRAM buffer.
            buffer_type, allocator, top_down = BufferType.DRAM, self.allocators[BufferType.DRAM], True
        with self.lock:
            self._busy += 1
            try:
                address = allocator.allocate(per_bank, top_down=top_down)
            finally:
                self._busy -= 1
            desc = BufferDesc(
                buffer_type,
                address,
                num_pages,
                page_size,
                aligned_page,
                per_bank,
                DeviceBuffer.next_unique_id(),
                placement,
            )
            self.live_buffers[desc.unique_id] = desc
            if self.dram_marks is not None and buffer_type == BufferType.DRAM:
                self.dram_marks[0] = max(self.dram_marks[0], address + per_bank)
            if _tracker.TRACE_ALLOC_TRACKING and buffer_type != BufferType.TRACE:
                _tracker.on_allocate(self, desc.unique_id)
            self._drain_deferred()
        for listener in GRAPH_LISTENERS:
            listener.on_allocate(self, desc)
        return DeviceBuffer(self, desc)

    def _free_buffer(self, desc: BufferDesc) -> None:
        """Called from DeviceBuffer.release/__del__: return the block to its allocator."""
        if not self.is_open:
            return
        with self.lock:
            if self._busy:  # a __del__ fired inside an allocation: finish that first
                self._deferred_frees.append(desc)
                return
            self._free_now(desc)

    def _free_now(self, desc: BufferDesc) -> None:
        if self.live_buffers.pop(desc.unique_id, None) is None:
            return
        self.allocators[desc.buffer_type].free(desc.address)
        if self.dram_marks is not None and desc.buffer_type == BufferType.DRAM:
            self.dram_marks[1] = max(self.dram_marks[1], desc.address + desc.size_per_bank)
        if self.unsafe_tracked:
            _tracker.on_free(self, desc.unique_id)
        for listener in GRAPH_LISTENERS:
            listener.on_deallocate(self, desc)

    def _drain_deferred(self) -> None:
        while self._deferred_frees:
            self._free_now(self._deferred_frees.pop())

    # --- memory -----------------------------------------------------------------------
    def read_pages(self, desc: BufferDesc, chip: int = 0) -> np.ndarray:
        memory = self.chip_memories[chip][desc.buffer_type]
        place = desc.placement
        if place is None:
            return memory.read_pages(desc.address, desc.num_pages, desc.aligned_page_size)
        pages = memory.read_placed(desc.address, place.banks, place.slots, desc.aligned_page_size)
        if place.row_split > 1:  # width-sharded row pieces back into whole rows
            pages = pages[:, : desc.page_size].reshape(-1, desc.page_size * place.row_split)
        return pages

    def write_pages(self, desc: BufferDesc, pages: np.ndarray, chip: int = 0) -> None:
        memory = self.chip_memories[chip][desc.buffer_type]
        place = desc.placement
        if place is None:
            memory.write_pages(desc.address, pages)
            return
        if place.row_split > 1:
            pages = np.ascontiguousarray(pages).reshape(-1, desc.page_size)
            if desc.aligned_page_size != desc.page_size:
                padded = np.zeros((len(pages), desc.aligned_page_size), dtype=np.uint8)
                padded[:, : desc.page_size] = pages
                pages = padded
        memory.write_placed(desc.address, place.banks, place.slots, pages)

    def read_values(self, desc: BufferDesc, spec: TensorSpec, chip: int = 0) -> torch.Tensor:
        """The values a tensor of `spec` at `desc` holds on `chip` now."""
        return decode(self.read_pages(desc, chip), spec)

    def encode_values(self, desc: BufferDesc, spec: TensorSpec, values: torch.Tensor) -> np.ndarray:
        """The pages `values` take in the buffer at `desc` (what write_pages stores)."""
        place = desc.placement
        page = desc.aligned_page_size if place is None or place.row_split == 1 else spec.page_size()
        return encode(values, spec, page)

    def write_values(self, desc: BufferDesc, spec: TensorSpec, values: torch.Tensor, chip: int = 0) -> None:
        """Store `values` into the buffer at `desc` on `chip`."""
        self.write_pages(desc, self.encode_values(desc, spec, values), chip)


def _check_chip_free(chip_ids: Iterable[int]) -> None:
    available = emulated_num_devices()
    for chip in chip_ids:
        if not 0 <= chip < available:
            raise RuntimeError(
                f"TT_FATAL @ tt_metal/impl/device/device_manager.cpp:0: device_id < num_devices\ninfo:\n"
                f"Device id {chip} is out of range: the emulated system has {available} devices "
                f"({SYSTEM_ENV_VAR} chooses it)"
            )
        if chip in _open_chips:
            raise RuntimeError(f"ttnn emulator: device {chip} is already open in this process")


def open_mesh_device(
    mesh_shape: Optional[MeshShape] = None,
    l1_small_size: int = DEFAULT_L1_SMALL_SIZE,
    trace_region_size: int = DEFAULT_TRACE_REGION_SIZE,
    num_command_queues: int = 1,
    dispatch_core_config: Any = None,
    offset: Any = None,
    physical_device_ids: Optional[list[int]] = None,
    worker_l1_size: int = DEFAULT_WORKER_L1_SIZE,
    **_ignored: Any,
) -> MeshDevice:
    """Open a mesh of emulated chips (default: the whole system mesh)."""
    if mesh_shape is None:
        mesh_shape = MeshShape(*system_mesh_shape())
    n = mesh_shape.mesh_size()
    if n > emulated_num_devices():
        raise RuntimeError(
            f"TT_FATAL @ tt_metal/distributed/system_mesh.cpp:0: requested_num_devices <= system_num_devices\n"
            f"info:\nRequested mesh {list(mesh_shape)} needs {n} devices; the emulated system has "
            f"{emulated_num_devices()} ({SYSTEM_ENV_VAR} chooses it)"
        )
    chips = list(physical_device_ids) if physical_device_ids else list(range(n))
    with _registry_lock:
        _check_chip_free(chips)
        mesh_id = next(_mesh_ids)
        if _ignored.get("_submesh"):
            mesh_id = next(_mesh_ids)
        mesh = MeshDevice(
            mesh_shape,
            chips,
            mesh_id=mesh_id,
            l1_small_size=l1_small_size,
            trace_region_size=trace_region_size,
            worker_l1_size=worker_l1_size,
            num_command_queues=num_command_queues,
        )
        for chip in chips:
            _open_chips[chip] = mesh
    return mesh


def open_device(
    *,
    device_id: int = 0,
    l1_small_size: int = DEFAULT_L1_SMALL_SIZE,
    trace_region_size: int = DEFAULT_TRACE_REGION_SIZE,
    dispatch_core_config: Any = None,
    worker_l1_size: int = DEFAULT_WORKER_L1_SIZE,
    num_command_queues: int = 1,
) -> MeshDevice:
    """Open one chip as a 1×1 mesh, as ttnn 0.81.1 does."""
    return open_mesh_device(
        MeshShape(1, 1),
        l1_small_size=l1_small_size,
        trace_region_size=trace_region_size,
        num_command_queues=num_command_queues,
        physical_device_ids=[device_id],
        worker_l1_size=worker_l1_size,
        _submesh=True,
    )


def _rows_cols(shape: Any) -> tuple[int, int]:
    dims = tuple(shape)
    return (1, int(dims[0])) if len(dims) == 1 else (int(dims[0]), int(dims[1]))


def close_mesh_device(mesh_device: MeshDevice) -> None:
    """Close the mesh (and its submeshes); its buffers and traces are gone (later frees are
    no-ops)."""
    for submesh in mesh_device.submeshes:
        close_mesh_device(submesh)
    with _registry_lock:
        for chip in mesh_device.chip_ids:
            if _open_chips.get(chip) is mesh_device:
                del _open_chips[chip]
    with mesh_device.lock:
        queues_of(mesh_device).finish()  # closing waits for every queue, as on hardware
        mesh_device.is_open = False
        program_cache.clear(mesh_device)  # the binaries go with the device
        mesh_device.live_buffers.clear()
        mesh_device.op_owned.clear()
        mesh_device.traces.clear()
        mesh_device.capturing.clear()


def close_device(device: MeshDevice) -> None:
    close_mesh_device(device)


def get_num_devices() -> int:
    return emulated_num_devices()


def get_device_ids() -> list[int]:
    return list(range(emulated_num_devices()))


def _cq(cq_id: Optional[int]) -> int:
    return 0 if cq_id is None else int(cq_id)


def synchronize_device(device: MeshDevice, cq_id: Optional[int] = None, sub_device_ids: Any = ()) -> None:
    """The host waits until `cq_id` (every queue of the device when None) has run everything
    enqueued on it. Forbidden inside a trace capture, as on hardware."""
    if device.capturing:
        errors.fatal_in_capture(errors.events_in_capture())
    with device.lock:
        queues_of(device).finish(None if cq_id is None else int(cq_id))


class MeshEvent(errors.NotEmulatedAttributes):
    """What record_event returns, printed as ttnn 0.81.1 prints it (its id counts the events
    recorded on that queue; a mock device says 0 for every one)."""

    def __init__(self, device: MeshDevice, cq_id: int) -> None:
        self.device = device
        self.cq_id = cq_id
        with device.lock:
            self._point = queues_of(device).record(cq_id)
        self.event_id = self._point.position

    def __repr__(self) -> str:
        rows, cols = (self.device.mesh_shape[0], self.device.mesh_shape[1]) if len(self.device.mesh_shape) == 2 else (1, 1)
        where = f"MeshCoordinateRange(start=MeshCoordinate([0, 0]), end=MeshCoordinate([{rows - 1}, {cols - 1}]))"
        return f"MeshEvent(id={self.event_id}, device_id={self.device.mesh_id}, mesh_cq_id={self.cq_id}, device_range={where})"


def record_event(mesh_device: MeshDevice, cq_id: Optional[int] = None, sub_device_ids: Any = (), device_range: Any = None) -> MeshEvent:
    """Record an event on a command queue: it completes when everything enqueued on that
    queue before it has run (forbidden during capture, as on hardware)."""
    if mesh_device.capturing:
        errors.fatal_in_capture(errors.events_in_capture())
    return MeshEvent(mesh_device, _cq(cq_id))


def wait_for_event(cq_id: int = 0, mesh_event: Optional[MeshEvent] = None) -> None:
    """Make a command queue wait for an event: nothing enqueued on `cq_id` after this runs
    before the event is done. The host does not wait (forbidden during capture)."""
    if mesh_event is None:
        raise TypeError("wait_for_event(): incompatible function arguments; takes (cq_id, mesh_event)")
    event = mesh_event
    device = event.device
    if device.capturing:
        errors.fatal_in_capture(errors.events_in_capture())
    with device.lock:
        queues_of(device).wait(_cq(cq_id), event._point)


def event_synchronize(mesh_event: MeshEvent) -> None:
    """The host waits until the event is done (everything before it on its queue has run)."""
    event = mesh_event
    device = event.device
    with device.lock:
        queues_of(device).host_wait(event._point)


class SubDeviceId(errors.NotEmulatedAttributes):
    """The index of a sub-device within a sub-device manager (CCL ops take one as
    `subdevice_id`; the emulator runs every op on the whole device, so it is carried as given).
    The managers themselves are in sub_devices.py."""

    def __init__(self, id: int) -> None:  # noqa: A002 - ttnn's parameter name
        self.id = int(id)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SubDeviceId) and other.id == self.id

    def __hash__(self) -> int:
        return hash(("SubDeviceId", self.id))

    def __repr__(self) -> str:
        return f"SubDeviceId({self.id})"


class SubDevice(errors.NotEmulatedAttributes):
    """The cores of one sub-device (a list of CoreRangeSets, one per core type)."""

    def __init__(self, cores: Any) -> None:
        self.cores = list(cores)


def ReadDeviceProfiler(device: MeshDevice) -> None:  # noqa: N802 - ttnn's name
    """Read the device profiler's buffers. The emulator has no device profiler (as ttnn
    built without one), so there is nothing to read; it still requires an open device."""
    if not device.is_open:
        raise RuntimeError("ttnn emulator: device is closed")
