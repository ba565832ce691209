"""Audit mode: every call of a named function is a would-be capture region.

`--audit-region model.Decoder.forward` names a function by module and qualified name (the
script itself counts as module `model` when it is model.py); `--audit-region Decoder.forward`
names one in the program's own script. Functions in importable
modules are wrapped as soon as their module is imported (wrapt post-import hooks). Functions in
the script itself do not exist until the script defines them, so the recorder spots them from
the stack at the first ttnn call they make, wraps them from then on, and closes that first,
already running, instance when its frame is gone from the stack.
"""

from __future__ import annotations

import os
import sys
from types import FrameType
from typing import Any

import wrapt


def _qualname(frame: FrameType) -> str:
    """The qualified name of a frame's function (co_qualname from 3.11; on 3.10 rebuilt from
    the class of `self` / `cls`, enough for methods)."""
    code = frame.f_code
    qual: str | None = getattr(code, "co_qualname", None)
    if qual is not None:
        return qual
    if code.co_varnames[:1] in (("self",), ("cls",)):
        owner = frame.f_locals.get(code.co_varnames[0])
        cls = owner if isinstance(owner, type) else type(owner)
        return f"{cls.__qualname__}.{code.co_name}"
    return code.co_name


def _resolve(root: Any, path: list[str]) -> tuple[Any, str, Any] | None:
    """(owner, attribute, function) for `path` under `root`, or None."""
    owner = root
    for part in path[:-1]:
        owner = getattr(owner, part, None)
        if owner is None:
            return None
    func = getattr(owner, path[-1], None)
    return (owner, path[-1], func) if callable(func) else None


class AuditRegions:
    """Wraps the named functions so each call emits REGION_BEGIN / REGION_END."""

    def __init__(self, names: list[str], recorder: Any) -> None:
        self.recorder = recorder
        self.pending: dict[str, str] = {}  # region name -> qualname still to find on the stack
        self._wrapped: set[str] = set()
        for name in names:
            self.pending[name] = name
            parts = name.split(".")
            for i in range(1, len(parts)):
                module, path = ".".join(parts[:i]), parts[i:]
                wrapt.register_post_import_hook(self._hook(name, path), module)

    def _hook(self, name: str, path: list[str]) -> Any:
        def on_import(module: Any) -> None:
            found = _resolve(module, path)
            if found is not None:
                self._wrap(name, *found)

        return on_import

    def _wrap(self, name: str, owner: Any, attr: str, func: Any) -> None:
        if name in self._wrapped:
            return
        self._wrapped.add(name)
        self.pending.pop(name, None)
        recorder = self.recorder

        def region_wrapper(wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
            self._close_lazy(recorder._thread(), force=True)
            n = recorder.region_begin(name)
            try:
                return wrapped(*args, **kwargs)
            finally:
                recorder.region_end(name, n)

        raw = owner.__dict__.get(attr, func) if hasattr(owner, "__dict__") else func
        if isinstance(raw, (staticmethod, classmethod)):
            raw = raw.__func__
            setattr(owner, attr, type(owner.__dict__[attr])(wrapt.FunctionWrapper(raw, region_wrapper)))
        else:
            setattr(owner, attr, wrapt.FunctionWrapper(raw, region_wrapper))

    # -- called by the recorder at each user call ---------------------------------------

    def on_call(self, recorder: Any, tl: Any) -> str | None:
        if getattr(tl, "lazy", None) is not None:
            self._close_lazy(tl)
        if not self.pending:
            return None
        f: FrameType | None = sys._getframe(2)
        while f is not None:
            qual = _qualname(f)
            module = f.f_globals.get("__name__", "")
            if module == "__main__":  # the script: also known by its file name (model.py)
                module = os.path.splitext(os.path.basename(f.f_globals.get("__file__", "")))[0]
            for name in list(self.pending):
                if name == qual or name == f"{module}.{qual}":
                    return self._found(name, qual, f, tl)
            f = f.f_back
        return None

    def _found(self, name: str, qual: str, frame: Any, tl: Any) -> str:
        found = _resolve(_Globals(frame.f_globals), qual.split("."))
        code = frame.f_code
        if found is not None:
            self._wrap(name, *found)
        else:
            self.pending.pop(name, None)  # a nested function: nothing to wrap, mark this call only
        n = self.recorder.region_begin(name)
        tl.lazy = (name, n, code)
        return name

    def _close_lazy(self, tl: Any, force: bool = False) -> None:
        lazy = getattr(tl, "lazy", None)
        if lazy is None:
            return
        name, n, code = lazy
        if not force:
            f: FrameType | None = sys._getframe(1)
            while f is not None:
                if f.f_code is code:
                    return  # still running
                f = f.f_back
        tl.lazy = None
        self.recorder.region_end(name, n)

    def finish(self) -> None:
        tl = self.recorder._thread()
        if getattr(tl, "lazy", None) is not None:
            self._close_lazy(tl, force=True)


class _Globals:
    """Attribute access over a module's globals dict (the script's __main__)."""

    def __init__(self, globals_: dict) -> None:
        self._g = globals_

    def __getattr__(self, name: str) -> Any:
        return self._g.get(name)

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "_g":
            object.__setattr__(self, name, value)
        else:
            self._g[name] = value

    @property
    def __dict__(self) -> dict:  # type: ignore[override]
        return self._g

