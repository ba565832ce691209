"""Open devices: the objects the allocator's view is read for, their ids and bank counts.

A device's id is asked of the object once (`device.id()`) and kept by the object's id(), so a
call naming a device costs a dictionary lookup.
"""

from __future__ import annotations

from typing import Any

from ttrecord.recorder.tensors import enum_name


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
            for k in [k for k, v in self._ids.items() if v == dev_id]:  # in place: C reads it
                del self._ids[k]
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
