"""Tensor metadata for call records, from host-side metadata calls only.

Nothing here reads device memory or synchronizes: a device tensor is described by
`buffer_address()`, `memory_config()`, `shape`, `dtype`, `layout`, `storage_type()` and its
device's id, and its bank-local size comes from the allocator's own snapshot (falling back to
`ceil(pages / banks) * aligned_page_size`). Descriptions are cached per `tensor_id` and
revalidated with one `buffer_address()` call, since most tensors are read many times.

A description is a plain tuple so it can be marshalled into the log as is, in the field order
of `records.TensorDesc` (its buffer: `records.BufferDesc`, or None).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from types import ModuleType
from typing import Any

from ttrecord import ttnn_versions
from ttrecord.placement import grid_text
from ttrecord.recorder.records import TENSOR_BUFFER

_names: dict[int, tuple[Any, str]] = {}


def enum_name(value: Any) -> str:
    """`DataType.BFLOAT16` -> "BFLOAT16", cached per member.

    Keyed by identity (enum members are singletons, and the cache keeps them alive): hashing
    an Enum member runs Python code, and IntEnum members of different enums compare equal.
    """
    hit = _names.get(id(value))
    if hit is not None and hit[0] is value:
        return hit[1]
    name = getattr(value, "name", None)
    if not isinstance(name, str):
        name = str(value).rsplit(".", 1)[-1]
    if len(_names) < 10_000:
        _names[id(value)] = (value, name)
    return name


class TensorDescriber:
    """Turns ttnn tensors into description tuples; one per recorder."""

    def __init__(
        self,
        device_id: Callable[[Any], int | None],
        buffer_size: Callable[[int | None, str, int], int | None],
        num_banks: Callable[[int | None, str], int],
    ) -> None:
        self._device_id = device_id
        self._buffer_size = buffer_size
        self._num_banks = num_banks
        self.cache: dict[int, tuple[int | None, tuple]] = {}
        # (device, buffer type, address) -> tensor_ids of the cached device tensors, so a freed
        # buffer drops its entry: the cache holds live tensors only. Entries that outlived
        # their tensors would pile up in the garbage collector's oldest generation and make
        # its full collections (tens of ms with torch loaded) frequent.
        self._by_buffer: dict[tuple, list[int]] = {}

    def use_hot_path(self, hot: ModuleType | None, device_ids: dict, entries: dict,
                     banks: dict) -> None:  # fmt: skip
        """Look descriptions up and store them with the C extension's `describe` (the same
        steps as `describe` and `store` below). `device_ids`, `entries` and `banks` are the
        dictionaries behind the device id, buffer size and bank count callbacks, which C reads
        first (Devices._ids, Ledger.entries, Devices._banks)."""
        if hot is not None:
            # interleaved and host tensors in C; the rest (sharded, ...) by _build below
            self._build = functools.partial(  # type: ignore[method-assign]
                hot.build, _names, enum_name, _configs, device_ids, self._device_id, entries,
                banks, ttnn_versions.tensor_pages, self._build)
            # the partial's arguments too: the C describe calls the C build without it
            self.describer = (self.cache, self._by_buffer, self._build, self._build.args)
            self.describe = functools.partial(  # type: ignore[method-assign]
                hot.describe, self.describer)

    def describe(self, t: Any) -> tuple:
        tid = getattr(t, "tensor_id", None)
        if tid is not None:
            hit = self.cache.get(tid)
            if hit is not None:
                address = hit[0]
                if address is None:  # host tensors keep their metadata
                    return hit[1]
                try:
                    if t.buffer_address() == address:
                        return hit[1]
                except Exception:  # deallocated since: describe it afresh
                    pass
        return self.store(t, tid)

    def store(self, t: Any, tid: int | None) -> tuple:
        """Describe `t` afresh and cache the description under `tid`."""
        desc = self._build(t, tid)
        if tid is not None:
            buf = desc[TENSOR_BUFFER]
            cache = self.cache
            if buf is None:
                cache[tid] = (None, desc)
            else:
                cache[tid] = (buf[2], desc)
                key = (buf[0], buf[1], buf[2])
                tids = self._by_buffer.get(key)
                if tids is None:
                    self._by_buffer[key] = [tid]
                elif tid not in tids:  # views share their buffer
                    tids.append(tid)
            if len(cache) > 100_000:
                cache.clear()
                self._by_buffer.clear()
        return desc

    def forget(self, freed: list[tuple]) -> None:
        """Drop the descriptions of the tensors whose buffers were just freed."""
        by_buffer, cache = self._by_buffer, self.cache
        for buf in freed:
            for tid in by_buffer.pop((buf[0], buf[1], buf[2]), ()):
                cache.pop(tid, None)

    def _build(self, t: Any, tid: int | None) -> tuple:
        try:
            shape = tuple(map(int, t.shape))
        except Exception:
            shape = ()
        dtype = enum_name(t.dtype)
        layout = enum_name(t.layout)
        if enum_name(t.storage_type()) != "DEVICE":
            return (tid, "host", shape, dtype, layout, None, None)
        try:
            address = t.buffer_address()
        except Exception:  # a deallocated device tensor has no buffer
            return (tid, "device", shape, dtype, layout, None, None)
        mc = t.memory_config()
        btype = enum_name(mc.buffer_type)
        mem_layout = enum_name(mc.memory_layout)
        memory_config = _configs.get((btype, mem_layout))
        if memory_config is None:
            memory_config = _configs[(btype, mem_layout)] = f"{btype} {mem_layout.lower()}"
        if mem_layout != "INTERLEAVED":  # where the shards are (ttrecord.placement)
            grid = grid_text(mc)
            if grid is not None:
                memory_config = f"{memory_config} on {grid}"
        device = self._device_id(t.device())
        if device is None and not _allocated(t):
            # Deallocated already (deallocate(force=True) twice): no buffer, so the second
            # free records nothing instead of a phantom buffer on no device.
            return (tid, "device", shape, dtype, layout, None, None)
        size = self._buffer_size(device, btype, address)
        page_size = num_pages = None
        if size is None:
            num_pages, page_size = ttnn_versions.tensor_pages(t)  # 0.66.0 has no page methods
            per_shard = _pages_per_shard(mc, layout) if mem_layout != "INTERLEAVED" else None
            if per_shard is not None:  # a sharded buffer reserves one shard per bank
                size = per_shard * page_size
            else:
                banks = self._num_banks(device, btype)
                size = -(-num_pages // banks) * page_size
        buffer = (device, btype, address, size, page_size, num_pages)
        return (tid, "device", shape, dtype, layout, memory_config, buffer)


_configs: dict[tuple[str, str], str] = {}


def _pages_per_shard(mc: Any, layout: str) -> int | None:
    """Pages one shard holds (tiles of the shard shape, or its rows in ROW_MAJOR), which is
    what a sharded buffer reserves in each bank; None when the config has no shard spec."""
    try:
        height, width = (int(d) for d in mc.shard_spec.shape)
    except Exception:
        return None
    if layout == "TILE":
        return -(-height // 32) * -(-width // 32)
    return height

def _allocated(t: Any) -> bool:
    try:
        return bool(t.is_allocated())
    except Exception:
        return True  # cannot tell: describe it as before


def describe_torch(t: Any) -> tuple:
    """A torch tensor handed to ttnn (from_torch): host data, shape and dtype only."""
    return (None, "host", tuple(t.shape), str(t.dtype).replace("torch.", ""), None, None, None)
