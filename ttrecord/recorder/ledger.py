"""The buffers the recorder knows to be live, kept at a cost proportional to what changed.

A real model keeps thousands of device buffers alive (weights, KV caches), and the allocator's
full view (`ttnn._ttnn.reports.get_buffers`) costs O(live buffers) per read: diffing it around
every call cost +13 ms per op at 5,000 live buffers on real ttnn. So the ledger learns:

- allocations from the tensors a call returns (or receives and the ledger has never seen):
  `buffer_address()`, `buffer_unique_id()`, pages; a buffer at a known address with another
  unique id means the old one was freed (address reuse);
- frees by reference drop from the death of the Tensor objects that own a buffer
  (`lifetimes.watch`), the moment the last owner goes; explicit frees (`deallocate`) from
  `is_allocated()` of the call's inputs after it returns;
- everything else (trace buffers, kernel binaries, buffers no tensor names) from a full
  snapshot diff (`reconcile`), taken only where a hazard is decided: around trace capture,
  release, device open/close, before `execute_trace` when something happened the tensors
  cannot show, after a call that grew the program cache while a trace is live, and at exit.

If deaths cannot be watched (a non-CPython interpreter), `watching` is False and the recorder
reconciles around every call, as before.
"""

from __future__ import annotations

from collections import deque
from typing import Any

from ttrecord.recorder.devices import Devices
from ttrecord.recorder.tensors import enum_name

Buffer = tuple  # (device, buffer type name, address, size per bank)
_KEY, _SIZE, _UID, _OWNERS, _LIVE = range(5)


class Ledger:
    """Live buffers by (device, buffer type, address); see the module docstring."""

    def __init__(self, reports: Any, devices: Devices) -> None:
        self._get_buffers = reports.get_buffers
        self._devices = devices
        # (device, buffer type, address) -> [key, size per bank, unique id, owners, live]
        self.entries: dict[tuple, list] = {}
        self._owner: dict[int, list] = {}  # id(Tensor object) -> the entry it owns
        self.deaths: deque = deque()  # entries that lost an owner, not yet counted
        self.generation = 0  # bumped by every allocation or free the ledger records
        self.dirty = False  # something happened that only a snapshot can show
        self.enabled = True
        owner_pop, died = self._owner.pop, self.deaths.append

        def on_death(ident: int) -> None:  # runs inside the deallocator: no object access
            entry = owner_pop(ident, None)
            if entry is not None:
                died(entry)

        self.on_death = on_death

    # -- queries -----------------------------------------------------------------------

    def size_of(self, device: int | None, buffer_type: str, address: int) -> int | None:
        entry = self.entries.get((device, buffer_type, address))
        return None if entry is None else entry[_SIZE]

    def snapshot_keys(self) -> set[tuple[int, str, int]]:
        """(device, buffer type name, address) of every buffer live now."""
        return set(self.entries)

    # -- per call ------------------------------------------------------------------------

    def drain(self) -> list[Buffer]:
        """Buffers whose last known owner died since the last drain (frees by reference drop)."""
        freed = []
        deaths = self.deaths
        while deaths:
            entry = deaths.popleft()
            entry[_OWNERS] -= 1
            if entry[_OWNERS] <= 0 and entry[_LIVE]:
                freed.append(self._drop(entry))
        if len(freed) > 1:  # frees between two calls come in address order, as a diff has them
            freed.sort(key=_order)
        return freed

    def observe(self, t: Any, buf: tuple, changes: list, output: bool = False) -> None:
        """Note `t` as an owner of its buffer `buf` (a description's buffer tuple); appends
        ("free", Buffer) for a buffer its address reuse proves gone and ("alloc", Buffer) for
        one the ledger did not know. A call's new `output` never takes over a buffer only a
        snapshot saw (no unique id): that one was freed unseen and its address reused."""
        ident = id(t)
        key = (buf[0], buf[1], buf[2])
        known = self._owner.get(ident)
        if known is not None:
            if known[_KEY] == key and known[_LIVE]:
                return  # the common case: an input seen before
            del self._owner[ident]
            known[_OWNERS] -= 1
        if not self.enabled:
            return
        try:
            uid = int(t.buffer_unique_id())
        except Exception:
            uid = None
        entry = self.entries.get(key)
        if entry is not None and (entry[_UID] == uid or (entry[_UID] is None and not output)
                                  or uid is None):  # fmt: skip
            if entry[_UID] is None:
                entry[_UID] = uid
        else:
            if entry is not None:
                changes.append(("free", self._drop(entry)))
            entry = [key, buf[3], uid, 0, True]
            self.entries[key] = entry
            self.generation += 1
            changes.append(("alloc", (key[0], key[1], key[2], buf[3])))
        entry[_OWNERS] += 1
        self._owner[ident] = entry

    def freed_inputs(self, tensors: list, changes: list) -> None:
        """Inputs whose buffer a call freed explicitly (`deallocate`, an op's own)."""
        owner = self._owner
        for t in tensors:
            entry = owner.get(id(t))
            if entry is None or not entry[_LIVE]:
                continue
            try:
                allocated = t.is_allocated()
            except Exception:  # cannot tell: the tensors' deaths and snapshots will
                allocated = True
            if not allocated:
                changes.append(("free", self._drop(entry)))

    def _drop(self, entry: list) -> Buffer:
        entry[_LIVE] = False
        key = entry[_KEY]
        if self.entries.get(key) is entry:
            del self.entries[key]
        self.generation += 1
        return (key[0], key[1], key[2], entry[_SIZE])

    # -- snapshots (decision points only) ------------------------------------------------

    def _snapshot(self) -> dict[tuple, int] | None:
        objects = self._devices.objects
        if not objects:
            return {}  # every device closed: whatever was live is gone
        try:
            infos = self._get_buffers(objects)
        except Exception:  # e.g. a device closed behind our back: keep the ledger
            return None
        return {(int(i.device_id), enum_name(i.buffer_type), int(i.address)):
                int(i.max_size_per_bank) for i in infos}  # fmt: skip

    def reconcile(self) -> tuple[list[Buffer], list[Buffer]] | None:
        """(freed, allocated) between the ledger and the allocator's full view, which then
        agree; None when they already did (or the view is unavailable)."""
        self.dirty = False
        if not self.enabled:
            return None
        truth = self._snapshot()
        if truth is None:
            return None
        entries = self.entries
        freed = [self._drop(entries[k]) for k in sorted(entries.keys() - truth.keys(), key=_order)]
        allocated = []
        for key in sorted(truth.keys() - entries.keys(), key=_order):
            size = truth[key]
            entries[key] = [key, size, None, 0, True]
            allocated.append((key[0], key[1], key[2], size))
        if allocated:
            self.generation += 1
        for key, size in truth.items():  # a footprint worked out from pages: trust the allocator
            entry = entries[key]
            if entry[_SIZE] != size:
                entry[_SIZE] = size
        if not freed and not allocated:
            return None
        return freed, allocated

    changes = reconcile  # the name benchmarks and older callers use


def _order(key: tuple) -> tuple:
    return (key[0] if key[0] is not None else -1, key[2])
