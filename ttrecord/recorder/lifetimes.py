"""Tensor deaths, seen the moment they happen: how frees by reference drop are found.

`ttnn.Tensor` takes no weak references and frees its device buffer when its last Python
reference goes, with no ttnn call a proxy could see. Diffing the allocator's full view
(`get_buffers`) around every call finds those frees, but costs O(live buffers) per call
(milliseconds at a few thousand buffers on real ttnn). Instead the recorder watches the
deallocation of Tensor objects themselves:

- a Python class (the emulator's Tensor): a `__del__` on the class; CPython calls it from the
  class's deallocator before the object goes;
- a native class (real ttnn's nanobind Tensor, verified on 0.81.1: it has no `__dict__`, and a
  `__del__` set on it is never called because nanobind's deallocator skips finalizers): the
  type's `tp_dealloc` slot is swapped, through ctypes, for a callback that notes the object's
  address and then calls the original deallocator, GIL held throughout.

A watcher gets the dying object's `id()` only; it must not touch the object. One hook per class
serves every watcher; the original slot goes back when the last watcher leaves (and at exit,
before module teardown, so no callback runs in a half-finalized interpreter).
"""

from __future__ import annotations

import atexit
import ctypes
import sys
from collections.abc import Callable
from typing import Any

Watcher = Callable[[int], None]
_TP_DEALLOC = 6 * ctypes.sizeof(ctypes.c_void_p)  # ob_refcnt, ob_type, ob_size, name, basic, item
_hooks: dict[type, _Hook] = {}


class _Hook:
    """The deallocation hook of one class and the watchers it calls."""

    def __init__(self, cls: type) -> None:
        self.cls = cls
        self.watchers: list[Watcher] = []
        watchers = self.watchers
        if _is_python_class(cls):
            self.native = False
            self._saved_del = cls.__dict__.get("__del__")
            previous = getattr(cls, "__del__", None)  # its own, or a base class's

            def __del__(obj: Any) -> None:
                ident = id(obj)
                for w in watchers:
                    w(ident)
                if previous is not None:
                    previous(obj)

            cls.__del__ = __del__  # type: ignore[attr-defined]
            return
        self.native = True
        slot = ctypes.c_void_p.from_address(id(cls) + _TP_DEALLOC)
        self._slot = slot
        self._saved = slot.value
        assert self._saved is not None  # every type has a tp_dealloc
        # PYFUNCTYPE: calling the original keeps the GIL (CFUNCTYPE would release it).
        original = ctypes.PYFUNCTYPE(None, ctypes.c_void_p)(self._saved)

        def dealloc(address: int) -> None:
            try:
                for w in watchers:
                    w(address)
            except BaseException:  # never let a watcher stop the object being freed
                pass
            original(address)

        self._callback = ctypes.CFUNCTYPE(None, ctypes.c_void_p)(dealloc)
        self._original = original
        slot.value = ctypes.cast(self._callback, ctypes.c_void_p).value

    def remove(self) -> None:
        if not self.native:
            if self._saved_del is None:
                try:
                    del self.cls.__del__  # type: ignore[attr-defined]
                except AttributeError:
                    pass
            else:
                self.cls.__del__ = self._saved_del  # type: ignore[attr-defined]
            return
        self._slot.value = self._saved
        # A frame of the callback may still be running (a dealloc that removed the hook):
        # keep the ctypes objects alive for good; they are tiny.
        _retired.append(self)


_retired: list[_Hook] = []


class _Probe:
    pass


def _dealloc_of(cls: type) -> int | None:
    return ctypes.c_void_p.from_address(id(cls) + _TP_DEALLOC).value


_SUBTYPE_DEALLOC = _dealloc_of(_Probe)  # CPython's deallocator of Python-defined classes


def _is_python_class(cls: type) -> bool:
    """True for classes defined in Python: their deallocator (subtype_dealloc) calls
    `__del__`; a native class's own deallocator may not (nanobind's does not)."""
    return _dealloc_of(cls) == _SUBTYPE_DEALLOC


def watch(cls: type, watcher: Watcher) -> bool:
    """Call `watcher(id(obj))` whenever an instance of `cls` is deallocated. False when this
    interpreter cannot hook the class (the caller then falls back to snapshots)."""
    if sys.implementation.name != "cpython":
        return False
    hook = _hooks.get(cls)
    if hook is None:
        try:
            hook = _Hook(cls)
        except Exception:
            return False
        _hooks[cls] = hook
    hook.watchers.append(watcher)
    return True


def unwatch(cls: type, watcher: Watcher) -> None:
    hook = _hooks.get(cls)
    if hook is None:
        return
    try:
        hook.watchers.remove(watcher)
    except ValueError:
        pass
    if not hook.watchers:
        del _hooks[cls]
        hook.remove()


@atexit.register
def _remove_all() -> None:
    for cls in list(_hooks):
        hook = _hooks.pop(cls)
        hook.watchers.clear()
        hook.remove()
