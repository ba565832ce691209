"""Allocation truth from the allocator's own view: `ttnn._ttnn.reports.get_buffers`.

`ttnn.Tensor` has no weak references and frees its buffer when its last reference goes, with
no call a proxy could see. So the recorder asks the allocator for every live buffer before and
after each user call and diffs the snapshots: buffers gone before a call were freed (by garbage
collection or `del`) between calls, and appear before that call in the event order; buffers
that appear or go during a call belong to it. Both backends implement `get_buffers`.
"""

from __future__ import annotations

from operator import attrgetter
from typing import Any

from ttrecord.recorder.tensors import enum_name

# (device_id, address, size per bank, buffer type) of one BufferInfo: a buffer's identity.
_key = attrgetter("device_id", "address", "max_size_per_bank", "buffer_type")
Buffer = tuple  # (device, buffer_type name, address, size)


class Devices:
    """Open devices: the objects (kept for get_buffers), their ids and bank counts."""

    def __init__(self, reports: Any) -> None:
        self._reports = reports
        self.objects: list[Any] = []
        self.types: set[type] = set()
        self._ids: dict[int, int] = {}  # id(object) -> device id
        self._banks: dict[tuple[int | None, str], int] = {}

    def id_of(self, device: Any) -> int | None:
        if device is None:
            return None
        known = self._ids.get(id(device))
        if known is not None:
            return known
        try:
            return int(device.id())
        except Exception:
            return None

    def add(self, device: Any) -> dict[str, Any]:
        """Track a newly opened device; returns what the backend says about it."""
        dev_id = self.id_of(device)
        if id(device) not in self._ids:
            self.objects.append(device)
            self._ids[id(device)] = dev_id
            self.types.add(type(device))
        facts: dict[str, Any] = {}
        try:
            facts["arch"] = enum_name(device.arch()).lower()
        except Exception:
            pass
        try:
            facts["num_dram_banks"] = int(device.num_dram_channels())
        except Exception:
            pass
        try:
            info = self._reports.get_device_info(device)
            facts["num_l1_banks"] = int(info.l1_num_banks)
            # plain ints only: the log is marshalled, and backends may return int subclasses
            facts["info"] = {k: int(getattr(info, k)) for k in dir(info) if not k.startswith("_")
                             and isinstance(getattr(info, k, None), int)}  # fmt: skip
        except Exception:
            pass
        for btype, key in (("DRAM", "num_dram_banks"), ("L1", "num_l1_banks")):
            if key in facts:
                self._banks[(dev_id, btype)] = facts[key]
        return facts

    def remove(self, device: Any) -> None:
        if id(device) in self._ids:
            del self._ids[id(device)]
            self.objects = [d for d in self.objects if d is not device]

    def num_banks(self, device: int | None, buffer_type: str) -> int:
        return self._banks.get((device, buffer_type), 8 if buffer_type != "L1" else 130)


class Allocations:
    """Diffs get_buffers snapshots; `changes()` returns what happened since the last one."""

    def __init__(self, reports: Any, devices: Devices) -> None:
        self._get_buffers = reports.get_buffers
        self._devices = devices
        self._last: frozenset = frozenset()
        self._last_infos: Any = None  # the last get_buffers answer and its keys (a cache)
        self._last_keys: frozenset = frozenset()
        # (device, buffer type name, address) -> bank-local size of every live buffer
        self.live: dict[tuple[int, str, int], int] = {}

    def size_of(self, device: int | None, buffer_type: str, address: int) -> int | None:
        return self.live.get((device, buffer_type, address))

    def snapshot(self) -> frozenset:
        objects = self._devices.objects
        if not objects:
            return frozenset()
        try:
            infos = self._get_buffers(objects)
        except Exception:  # e.g. a device closed behind our back: keep the last known state
            return self._last
        if infos == self._last_infos:  # C-speed when the backend returns equal records
            return self._last_keys
        keys = frozenset(map(_key, infos))
        self._last_infos, self._last_keys = infos, keys
        return keys

    def snapshot_keys(self) -> set[tuple[int, str, int]]:
        """(device, buffer type name, address) of every buffer live now."""
        return {(int(k[0]), enum_name(k[3]), int(k[1])) for k in self.snapshot()}

    def changes(self) -> tuple[list[Buffer], list[Buffer]] | None:
        """(freed, allocated) since the last call, or None when nothing changed."""
        now = self.snapshot()
        last = self._last
        if now == last:
            return None
        self._last = now
        gone, new = last - now, now - last
        freed = [self._buffer(k) for k in (sorted(gone, key=_sort_key) if len(gone) > 1 else gone)]
        allocated = [self._buffer(k) for k in (sorted(new, key=_sort_key) if len(new) > 1 else new)]
        live = self.live
        for dev, btype, address, _ in freed:
            live.pop((dev, btype, address), None)
        for dev, btype, address, size in allocated:
            live[(dev, btype, address)] = size
        return freed, allocated

    @staticmethod
    def _buffer(key: tuple) -> Buffer:
        device, address, size, btype = key
        return (int(device), enum_name(btype), int(address), int(size))


def _sort_key(key: tuple) -> tuple:
    return (key[0], key[1])
