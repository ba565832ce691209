"""`ttnn._ttnn.reports`: the allocator's own view of device memory.

A recorder diffs `get_buffers` snapshots around calls to see every allocation
and free, including frees by garbage collection and intermediates no Python
object refers to. Nothing here reads device memory or synchronizes.
"""

from __future__ import annotations

from typing import Any, NamedTuple, Union
from collections.abc import Iterable

from ..types import BufferType, TensorMemoryLayout


class BufferInfo(NamedTuple):
    device_id: int
    address: int
    max_size_per_bank: int
    buffer_type: BufferType
    buffer_layout: TensorMemoryLayout = TensorMemoryLayout.INTERLEAVED


class BufferPageInfo(NamedTuple):
    device_id: int
    address: int
    core_y: int
    core_x: int
    bank_id: int
    page_index: int
    page_address: int
    page_size: int
    buffer_type: BufferType


class DeviceInfo(NamedTuple):
    num_y_cores: int
    num_x_cores: int
    num_y_compute_cores: int
    num_x_compute_cores: int
    worker_l1_size: int
    l1_num_banks: int
    l1_bank_size: int
    address_at_first_l1_bank: int
    address_at_first_l1_cb_buffer: int
    num_banks_per_storage_core: int
    num_compute_cores: int
    num_storage_cores: int
    total_l1_memory: int
    total_l1_for_tensors: int
    total_l1_for_interleaved_buffers: int
    total_l1_for_sharded_buffers: int
    cb_limit: int
    # Not in ttnn's struct; the emulator's DRAM geometry for tools that want it.
    num_dram_banks: int = 8
    dram_bank_size: int = 0


def _devices(devices: Union[Any, Iterable[Any], None]) -> list:
    if devices is None:
        from ..device import _open_chips

        seen: list = []
        for mesh in _open_chips.values():
            if mesh not in seen:
                seen.append(mesh)
        return seen
    if hasattr(devices, "live_buffers"):
        return [devices]
    return list(devices)


def get_buffers(devices: Union[Any, Iterable[Any], None] = None) -> list[BufferInfo]:
    """Every live buffer on the given (mesh) devices, newest first.

    A recorder calls this around every op, so each mesh keeps its last answer (keyed by the
    live buffers' unique ids) and each buffer's BufferInfo: an unchanged allocator costs a
    tuple comparison, a changed one builds records for the new buffers only.
    """
    out: list[BufferInfo] = []
    for mesh in _devices(devices):
        with mesh.lock:
            live = mesh.live_buffers
            ids = tuple(live)
            cached = mesh.__dict__.get("_get_buffers_cache")
            if cached is not None and cached[0] == ids:
                out += cached[1]
                continue
            descs = list(live.values())
        known = cached[2] if cached is not None else {}
        infos = list(map(known.get, ids))
        if None in infos:  # new buffers: the newest are last, so start at the first one
            mesh_id = mesh.mesh_id
            for i in range(infos.index(None), len(infos)):
                if infos[i] is None:
                    d = descs[i]
                    layout = TensorMemoryLayout.INTERLEAVED if d.placement is None else d.placement.memory_layout
                    infos[i] = BufferInfo(mesh_id, d.address, _reported_size(mesh, d), d.buffer_type, layout)
        answer = infos[::-1]
        mesh.__dict__["_get_buffers_cache"] = (ids, answer, dict(zip(ids, infos)))
        out += answer
    return out


def _reported_size(mesh: Any, d: Any) -> int:
    """`max_size_per_bank` as ttnn 0.81.1's get_buffers reports it: pages per bank times the
    page size *before* alignment (a ROW_MAJOR [1024, 16] bf16 DRAM buffer reserves 8192 B per
    bank but reports 4096); graph capture's buffer nodes report the aligned size."""
    if d.page_size == d.aligned_page_size:
        return int(d.size_per_bank)
    if d.placement is not None:
        return int(d.placement.pages_per_shard * d.page_size)
    config = mesh.config
    banks = config.num_l1_banks if d.buffer_type == BufferType.L1 else config.num_dram_banks
    return int(-(-d.num_pages // banks) * d.page_size)


def get_buffer_pages(devices: Union[Any, Iterable[Any], None] = None) -> list[BufferPageInfo]:
    """Placement of every page of every live DRAM/L1 buffer: interleaved page i in bank
    i % banks, row i // banks (an L1 bank is a core: DeviceConfig.l1_bank_cores); a sharded
    page on its shard's core at address + slot × page."""
    out: list[BufferPageInfo] = []
    for mesh in _devices(devices):
        config = mesh.config
        with mesh.lock:
            descs = list(mesh.live_buffers.values())
        for desc in descs:
            if desc.buffer_type == BufferType.L1:
                banks, grid_x = config.num_l1_banks, config.compute_grid[0]
            elif desc.buffer_type == BufferType.DRAM:
                banks, grid_x = config.num_dram_banks, config.num_dram_banks
            else:
                continue
            place = desc.placement
            if place is not None:
                for i, ((x, y), bank, slot) in enumerate(zip(place.cores, place.banks.tolist(), place.slots.tolist())):
                    out.append(BufferPageInfo(
                        mesh.mesh_id, desc.address, y, x, bank, i,
                        desc.address + slot * desc.aligned_page_size, desc.page_size, desc.buffer_type,
                    ))
                continue
            l1_cores = config.l1_bank_cores if desc.buffer_type == BufferType.L1 else None
            for i in range(desc.num_pages):
                bank = i % banks
                x, y = l1_cores[bank] if l1_cores else (bank % grid_x, bank // grid_x)
                out.append(
                    BufferPageInfo(
                        mesh.mesh_id,
                        desc.address,
                        y,
                        x,
                        bank,
                        i,
                        desc.address + (i // banks) * desc.aligned_page_size,
                        desc.page_size,
                        desc.buffer_type,
                    )
                )
    return out


def get_device_info(device: Any) -> DeviceInfo:
    """Geometry of the device's L1 as ttnn reports it (p150 values by default)."""
    config = device.config
    l1_bank_size = device.l1_top - config.l1_unreserved_base  # shrinks by l1_small_size
    cores = config.num_compute_cores
    return DeviceInfo(
        num_y_cores=config.full_grid[1],
        num_x_cores=config.full_grid[0],
        num_y_compute_cores=config.compute_grid[1],
        num_x_compute_cores=config.compute_grid[0],
        worker_l1_size=config.worker_l1_size,
        l1_num_banks=config.num_l1_banks,
        l1_bank_size=l1_bank_size,
        address_at_first_l1_bank=config.l1_unreserved_base,
        address_at_first_l1_cb_buffer=config.l1_unreserved_base,
        num_banks_per_storage_core=0,
        num_compute_cores=cores,
        num_storage_cores=0,
        total_l1_memory=cores * config.worker_l1_size,
        total_l1_for_tensors=config.num_l1_banks * l1_bank_size,
        total_l1_for_interleaved_buffers=config.num_l1_banks * l1_bank_size,
        total_l1_for_sharded_buffers=cores * l1_bank_size,
        cb_limit=l1_bank_size,
        num_dram_banks=config.num_dram_banks,
        dram_bank_size=config.dram_bank_size,
    )
