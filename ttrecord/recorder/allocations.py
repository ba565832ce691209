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
_key4 = attrgetter("device_id", "address", "max_size_per_bank", "buffer_type")
_device, _address = attrgetter("device_id"), attrgetter("address")
_size, _btype = attrgetter("max_size_per_bank"), attrgetter("buffer_type")
Buffer = tuple  # (device, buffer_type name, address, size)


class Devices:
    """Open devices: the objects (kept for get_buffers), their ids and bank counts."""

    def __init__(self, reports: Any) -> None:
        self._reports = reports
        self.objects: list[Any] = []
        self.types: set[type] = set()
        self._ids: dict[int, int | None] = {}  # id(object) -> device id
        self._banks: dict[tuple[int | None, str], int] = {}
        self._learned: dict[int, Any] = {}  # device id -> a submesh learned from its tensors

    def id_of(self, device: Any) -> int | None:
        if device is None:
            return None
        known = self._ids.get(id(device))
        if known is not None:
            return known
        try:
            dev_id = int(device.id())
        except Exception:
            return None
        if self.objects and dev_id not in self._learned and dev_id not in self._ids.values():
            self._learn(device, dev_id)
        return dev_id

    def _learn(self, device: Any, dev_id: int) -> None:
        """A device no open call returned (a submesh: `create_submesh(es)`) holds a tensor.
        `get_buffers` answers per mesh from that mesh's own allocator, with its id, so the
        snapshots must ask it too: else its buffers look freed at every snapshot."""
        if not hasattr(device, "id") or type(device) not in self.types:
            return
        self._learned[dev_id] = device
        self.objects.append(device)
        self._ids[id(device)] = dev_id

    def add(self, device: Any) -> dict[str, Any]:
        """Track a newly opened device; returns what the backend says about it."""
        dev_id = self._ids.get(id(device))
        if dev_id is None:
            try:
                dev_id = int(device.id())
            except Exception:
                dev_id = None
        if dev_id is not None and self._learned.pop(dev_id, None) is not None:
            self.objects = [d for d in self.objects if self._ids.get(id(d)) != dev_id]
            self._ids = {k: v for k, v in self._ids.items() if v != dev_id}
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
        mesh = mesh_facts(device)
        if mesh is not None:
            facts.setdefault("info", {})["mesh"] = mesh
        for btype, key in (("DRAM", "num_dram_banks"), ("L1", "num_l1_banks")):
            if key in facts:
                self._banks[(dev_id, btype)] = facts[key]
        return facts

    def remove(self, device: Any) -> None:
        if id(device) in self._ids:
            del self._ids[id(device)]
            self.objects = [d for d in self.objects if d is not device]
        if self._learned:  # closing a mesh closes its submeshes: learn them again if used
            learned = self._learned.values()
            self.objects = [d for d in self.objects if not any(d is s for s in learned)]
            for sub in learned:
                self._ids.pop(id(sub), None)
            self._learned.clear()

    def num_banks(self, device: int | None, buffer_type: str) -> int:
        return self._banks.get((device, buffer_type), 8 if buffer_type != "L1" else 130)


def mesh_facts(device: Any) -> dict[str, list[int]] | None:
    """The mesh's shape and its chips' device ids, row-major (`ttrecord.meshes` reads them)."""
    try:
        shape = [int(d) for d in device.shape]
        ids = [int(i) for i in device.get_device_ids()]
    except Exception:
        return None
    return {"shape": shape, "device_ids": ids} if shape and ids else None


class Allocations:
    """Diffs get_buffers snapshots; `changes()` returns what happened since the last one.

    A snapshot's keys are `(device, address, size per bank, id(buffer type))`: plain ints,
    hashed at C speed (hashing an enum member runs Python code, once per buffer per call).
    Enum members are singletons, so their id names the type; the members are kept alive here so
    an id is never reused. A backend whose enum values are not singletons (a new object per
    call) switches the keys to the type's name.
    """

    def __init__(self, reports: Any, devices: Devices) -> None:
        self._get_buffers = reports.get_buffers
        self._devices = devices
        self._last: frozenset = frozenset()
        self._last_infos: Any = None  # the get_buffers answer `_last` was made from
        self._type_names: dict[Any, str] = {}  # id(buffer type member) -> its name
        self._type_members: list[Any] = []
        self._by_name = False
        self._key_by_record: dict[int, tuple] = {}  # id(record of _last_infos) -> its key
        self._reuse_misses = 0
        self.generation = 0  # how many snapshots found a change
        # (device, buffer type name, address) -> bank-local size of every live buffer
        self.live: dict[tuple[int | None, str, int], int] = {}

    def size_of(self, device: int | None, buffer_type: str, address: int) -> int | None:
        return self.live.get((device, buffer_type, address))

    def _keys(self, infos: Any) -> tuple[frozenset, dict[int, tuple]]:
        """The snapshot's keys, and each record's key by id(record) for the next call.

        A backend that hands back the same record objects for unchanged buffers (the emulator)
        gets its keys looked up by identity: only new records are read. The ids are valid
        because the records stay referenced (`_last_infos`) until the next snapshot.
        """
        if self._by_name:
            keys: list[Any] = [(k[0], k[1], k[2], enum_name(k[3])) for k in map(_key4, infos)]
            return frozenset(keys), {}
        reuse = self._key_by_record
        if reuse and self._reuse_misses < 16:
            ids = list(map(id, infos))
            keys = list(map(reuse.get, ids))
            missing = keys.count(None)
            if missing < len(keys) or not keys:
                self._reuse_misses = 0
                if missing:
                    for i in range(keys.index(None), len(keys)):
                        if keys[i] is None:
                            k = _key4(infos[i])
                            keys[i] = (k[0], k[1], k[2], id(k[3]))
                return frozenset(keys), dict(zip(ids, keys))
            if missing > 1:
                self._reuse_misses += 1  # new records every time (real ttnn): stop trying
        keys = list(zip(map(_device, infos), map(_address, infos), map(_size, infos),
                        map(id, map(_btype, infos))))  # fmt: skip
        if self._reuse_misses >= 16:
            return frozenset(keys), {}
        return frozenset(keys), dict(zip(map(id, infos), keys))

    def _learn_types(self, infos: Any) -> bool:
        """Name the buffer types in `infos`; True when they turned out not to be singletons."""
        names = self._type_names
        for info in infos:
            member = info.buffer_type
            if id(member) in names:
                continue
            name = enum_name(member)
            if name in names.values():  # a second object for a known type
                self._by_name = True
                return True
            names[id(member)] = name
            self._type_members.append(member)
        return False

    def snapshot_keys(self) -> set[tuple[int, str, int]]:
        """(device, buffer type name, address) of every buffer live now."""
        objects = self._devices.objects
        try:
            infos = self._get_buffers(objects) if objects else ()
        except Exception:
            infos = self._last_infos or ()
        return {(int(i.device_id), enum_name(i.buffer_type), int(i.address)) for i in infos}

    def changes(self) -> tuple[list[Buffer], list[Buffer]] | None:
        """(freed, allocated) since the last call, or None when nothing changed."""
        objects = self._devices.objects
        if not objects:
            infos: Any = []  # every device closed: whatever was live is gone
        else:
            try:
                infos = self._get_buffers(objects)
            except Exception:  # e.g. a device closed behind our back: keep the last state
                return None
        if infos == self._last_infos:  # C speed when the backend returns equal records
            return None
        now, by_record = self._keys(infos)
        last = self._last
        new = now - last
        if not self._by_name:
            names = self._type_names
            for k in new:
                if k[3] not in names:
                    if self._learn_types(infos):  # switched to names: rebuild both sides
                        last = self._keys(self._last_infos or ())[0]
                        now, by_record = self._keys(infos)
                        new = now - last
                    break
        self._last_infos, self._key_by_record = infos, by_record
        if not new and len(now) == len(last):
            return None  # (equal sets: nothing new and nothing gone)
        self._last = now
        self.generation += 1
        gone = last - now
        buffer = self._buffer
        freed = [buffer(k) for k in (sorted(gone, key=_sort_key) if len(gone) > 1 else gone)]
        allocated = [buffer(k) for k in (sorted(new, key=_sort_key) if len(new) > 1 else new)]
        live = self.live
        for dev, btype, address, _ in freed:
            live.pop((dev, btype, address), None)
        for dev, btype, address, size in allocated:
            live[(dev, btype, address)] = size
        return freed, allocated

    def _buffer(self, key: tuple) -> Buffer:
        device, address, size, btype = key
        name = btype if self._by_name else self._type_names[btype]
        return (int(device), name, int(address), int(size))


def _sort_key(key: tuple) -> tuple:
    return (key[0], key[1])
