"""The tensors the replay verifier keeps alive, let go as soon as the program lets go of them.

`ttnn.Tensor` has no weak references, so the verifier must hold the tensors it will read. A
held tensor only the verifier still references is dropped by `sweep()`, which the recorder
calls at the start of every ttnn call, before its allocator snapshot. Device memory is allocated
only inside ttnn calls, so each allocation sees the free memory it would see without
verification, and every recorded address stays the same.
"""

from __future__ import annotations

import sys
from typing import Any

_getrefcount = sys.getrefcount


class Held:
    """One tensor the verifier keeps alive; `obj` is None once dropped."""

    __slots__ = ("obj",)

    def __init__(self, obj: Any) -> None:
        self.obj = obj


def _refs(h: Held) -> int:
    return _getrefcount(h.obj)


class Holds:
    def __init__(self) -> None:
        self._held: dict[int, Held] = {}
        self._base = _refs(Held(object()))  # the references a tensor only we hold has

    def __bool__(self) -> bool:
        return bool(self._held)

    def hold(self, obj: Any) -> Held:
        h = self._held.get(id(obj))
        if h is None:
            h = self._held[id(obj)] = Held(obj)
        return h

    def held(self) -> list[Held]:
        return list(self._held.values())

    def sweep(self) -> None:
        """Drop the tensors only the verifier still references."""
        base = self._base
        gone = [k for k, h in self._held.items() if _refs(h) <= base]
        for k in gone:
            self._held.pop(k).obj = None

    def drop_all(self) -> None:
        for h in self._held.values():
            h.obj = None
        self._held.clear()


def alive(held: Held, buf: tuple) -> Any:
    """The held tensor if it still owns the buffer `buf` it had when it was recorded."""
    obj = held.obj
    if obj is None:
        return None
    try:
        if not obj.is_allocated() or obj.buffer_address() != buf[2]:
            return None
    except Exception:
        return None
    return obj
