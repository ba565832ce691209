"""The wrapt proxy that puts the recorder between a program and `ttnn`.

`install()` replaces `sys.modules["ttnn"]` (and every loaded public `ttnn.*` submodule) with a
`ModuleProxy`. Attribute access on a proxy returns a cached `wrapt.FunctionWrapper` for every
op-like callable (plain functions on the emulator, `FastOperation` objects on real ttnn), a
proxy for submodules, and the attribute itself for classes, enums and constants. So
`import ttnn`, `import ttnn.experimental`, `from ttnn import add` and `ttnn.experimental.x`
all reach recording wrappers, and `ttnn.add is ttnn.add`. Transfer and lifetime methods of
`ttnn.Tensor` are wrapped on the class with `wrapt.wrap_function_wrapper`.
"""

from __future__ import annotations

import functools
import sys
import types
import warnings
from typing import Any

import wrapt

from ttrecord.events import Kind
from ttrecord.recorder.classify import TENSOR_METHODS, module_kind
from ttrecord.recorder import sub_devices, tracker
from ttrecord.recorder.recorder import Recorder

# Tensor operators: ttnn forwards them to ops (`a + b` is ttnn.add), so they are ops too.
TENSOR_OPERATORS = ("__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__",
                    "__matmul__", "__truediv__", "__neg__", "reshape")  # fmt: skip


def _make_wrapper(recorder: Recorder, name: str, kind: Kind) -> Any:
    """wrapt's wrapper(wrapped, instance, args, kwargs) for one op: a C-level partial, so the
    wrapper adds no Python frame of its own."""
    return functools.partial(recorder.call, name, kind)


class ModuleProxy(wrapt.ObjectProxy):
    """A ttnn module whose op attributes record their calls.

    An attribute is worked out by `__getattr__` once and then stashed in the proxy's own
    dictionary (with the C hot path), where wrapt's C lookup finds it: `ttnn.add` then costs
    a dictionary lookup instead of a Python call and a formatted AttributeError. A stashed
    attribute goes when the module's attribute is set or deleted, through the proxy or on the
    module itself (`_WatchedModule`)."""

    def __init__(self, module: types.ModuleType, installation: Installation, prefix: str) -> None:
        super().__init__(module)
        self._self_installation = installation
        self._self_prefix = prefix
        self._self_cache: dict[str, tuple[Any, Any]] = {}

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_self_"):
            raise AttributeError(name)
        module = self.__wrapped__
        value = getattr(module, name)
        cached = self._self_cache.get(name)
        if cached is not None and cached[0] is value:
            return cached[1]
        proxied = self._self_installation.proxy_for(self._self_prefix + name, value)
        self._self_cache[name] = (value, proxied)
        stash = self._self_installation.stash
        # only the module's own attributes, not what a module-level __getattr__ makes up
        if stash is not None and module.__dict__.get(name) is value:
            stash(self, name, proxied)
        return proxied

    def __setattr__(self, name: str, value: Any) -> None:
        if not name.startswith("_self_"):
            self._self_installation.forget(self.__wrapped__, name)
        super().__setattr__(name, value)

    def __delattr__(self, name: str) -> None:
        if not name.startswith("_self_"):
            self._self_installation.forget(self.__wrapped__, name)
        super().__delattr__(name)


class _WatchedModule(types.ModuleType):
    """The class of a proxied ttnn module while recording: setting or deleting an attribute
    on the module itself (`monkeypatch.setattr(ttnn, ...)` on the real module) drops what the
    proxies stashed for it."""

    def __setattr__(self, name: str, value: Any) -> None:
        super().__setattr__(name, value)
        _module_changed(self, name)

    def __delattr__(self, name: str) -> None:
        super().__delattr__(name)
        _module_changed(self, name)


_installations: list[Installation] = []  # installed now (tests install more than one)


def _module_changed(module: types.ModuleType, name: str) -> None:
    for installation in _installations:
        installation.forget(module, name)


class TensorClassProxy(wrapt.ObjectProxy):
    """`ttnn.Tensor` as the program sees it: constructing a tensor on a device is an h2d call.

    Real ttnn's Tensor is a nanobind class whose constructor ignores a patched `__init__`, so
    the class itself is proxied. isinstance/issubclass and subclassing work as with the class;
    only `type(t) is ttnn.Tensor` tells them apart. Host-only construction is not recorded.
    """

    def __init__(self, cls: type, recorder: Recorder) -> None:
        super().__init__(cls)
        self._self_recorder = recorder

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        cls = self.__wrapped__
        dev_types = self._self_recorder.devices.types
        if any(type(a) in dev_types for a in args) or any(
            type(a) in dev_types for a in kwargs.values()
        ):
            return self._self_recorder.call("Tensor", Kind.H2D, cls, None, args, kwargs)
        return cls(*args, **kwargs)

    def __instancecheck__(self, obj: Any) -> bool:
        return isinstance(obj, self.__wrapped__)

    def __subclasscheck__(self, cls: type) -> bool:
        return issubclass(cls, self.__wrapped__)

    def __mro_entries__(self, bases: tuple) -> tuple:
        return (self.__wrapped__,)


class Installation:
    """Everything `install()` changed, so `uninstall()` can put it back (tests need that)."""

    def __init__(self, recorder: Recorder, ttnn: types.ModuleType) -> None:
        self.recorder = recorder
        self.ttnn = ttnn
        self.package = ttnn.__name__  # "ttnn" or "ttrecord.emulator"
        self._module_proxies: dict[int, ModuleProxy] = {}
        self._functions: dict[int, tuple[Any, Any]] = {}
        self._saved_modules: dict[str, Any] = {}
        self._patched: list[tuple[type, str, Any]] = []
        self._saved_warn: Any = None
        self._tensor_class: TensorClassProxy | None = None
        hot = recorder.hot_module
        self.stash = getattr(hot, "stash", None)  # see ModuleProxy; None: no stashing
        self._unstash = getattr(hot, "unstash", None)
        self._classes: list[tuple[types.ModuleType, type]] = []  # modules watched, their class

    def forget(self, module: types.ModuleType, name: str) -> None:
        """Module attribute `name` changed: its proxy works it out again at the next read."""
        proxy = self._module_proxies.get(id(module))
        if proxy is None:
            return
        proxy._self_cache.pop(name, None)
        if self._unstash is not None:
            self._unstash(proxy, name)

    def _is_backend(self, value: Any) -> bool:
        module = getattr(value, "__module__", None) or type(value).__module__ or ""
        return module == self.package or module.startswith((self.package + ".", "ttnn"))

    def proxy_for(self, qualname: str, value: Any) -> Any:
        """The object a program gets for attribute `qualname` (relative to ttnn)."""
        if isinstance(value, types.ModuleType):
            return self.module_proxy(value, qualname)
        if value is self.ttnn.Tensor:
            if self._tensor_class is None:
                self._tensor_class = TensorClassProxy(value, self.recorder)
            return self._tensor_class
        if isinstance(value, type) and value.__name__ == tracker.TRACKER_CLASS and self._is_backend(value):
            return self._tracker_class(value, qualname)
        if isinstance(value, type) or not callable(value):
            return value
        short = qualname.rsplit(".", 1)[-1]
        kind = module_kind(short)
        if kind is None or not self._is_backend(value):
            return value
        known = self._functions.get(id(value))
        if known is not None and known[0] is value:
            return known[1]
        if short == tracker.SCOPE:  # a context manager: its entry and exit are recorded too
            wrapper = tracker.scope_wrapper(self.recorder, qualname, kind)
        elif sub_devices.routed(short):  # semaphores, collectives, trace calls: notes around
            wrapper = sub_devices.wrapper(self.recorder, qualname, kind, short)
        else:
            wrapper = _make_wrapper(self.recorder, qualname, kind)
        wrapped = wrapt.FunctionWrapper(value, wrapper)
        self._functions[id(value)] = (value, wrapped)
        return wrapped

    def _tracker_class(self, cls: type, qualname: str) -> Any:
        known = self._functions.get(id(cls))
        if known is None or known[0] is not cls:
            known = (cls, tracker.TrackerClassProxy(cls, self.recorder, qualname))
            self._functions[id(cls)] = known
        return known[1]

    def module_proxy(self, module: types.ModuleType, qualname: str) -> Any:
        name = module.__name__
        if not (name == self.package or name.startswith(self.package + ".")):
            return module  # e.g. torch or numpy re-exported by the backend
        if any(part.startswith("_") for part in qualname.split(".")):
            return module  # native internals (ttnn._ttnn) stay as they are
        proxy = self._module_proxies.get(id(module))
        if proxy is None:
            proxy = ModuleProxy(module, self, qualname + "." if qualname else "")
            self._module_proxies[id(module)] = proxy
            if self.stash is not None and type(module) is types.ModuleType:
                self._classes.append((module, type(module)))
                module.__class__ = _WatchedModule
        return proxy

    # -- install / uninstall -------------------------------------------------------------

    def install(self) -> ModuleProxy:
        top: ModuleProxy = self.module_proxy(self.ttnn, "")
        for name, module in list(sys.modules.items()):
            if name == "ttnn" or name.startswith("ttnn."):
                qual = name[len("ttnn.") :] if name != "ttnn" else ""
                self._saved_modules[name] = module
                if isinstance(module, types.ModuleType):
                    sys.modules[name] = self.module_proxy(module, qual)
        self._saved_modules.setdefault("ttnn", None)
        sys.modules["ttnn"] = top  # type: ignore[assignment]  # the proxy stands in for the module
        _installations.append(self)
        self._wrap_tensor_methods()
        self._hook_warnings()
        return top

    def _wrap_tensor_methods(self) -> None:
        cls = self.ttnn.Tensor
        names = [(n, k) for n, k in TENSOR_METHODS.items()]
        names += [(n, Kind.OP) for n in TENSOR_OPERATORS]
        for name, kind in names:
            if not hasattr(cls, name):
                continue
            original = cls.__dict__.get(name)
            wrapper = _make_wrapper(self.recorder, f"Tensor.{name}", kind)
            wrapt.wrap_function_wrapper(cls, name, wrapper)
            self._patched.append((cls, name, original))

    def _hook_warnings(self) -> None:
        """ttnn's warnings (e.g. the unsafe-allocation one) become WARNING events."""
        recorder = self.recorder
        original = warnings.warn
        self._saved_warn = original

        # Every argument the running Python's warnings.warn takes passes through unchanged
        # (3.12 added the keyword-only skip_file_prefixes; later versions may add more).
        def warn(message: Any, category: Any = None, stacklevel: int = 1, source: Any = None,
                 *args: Any, **kwargs: Any) -> None:  # fmt: skip
            tl = recorder._thread()
            if tl.call == 0:  # the replay verifier's own calls
                return
            if tl.call is not None:
                cat = category or (type(message) if isinstance(message, Warning) else UserWarning)
                recorder.point("warning", getattr(cat, "__name__", "Warning"),
                               {"message": str(message)}, region=recorder.current_region())  # fmt: skip
            original(message, category, stacklevel + 1, source, *args, **kwargs)

        warnings.warn = warn

    def uninstall(self) -> None:
        if self in _installations:
            _installations.remove(self)
        for module, cls in reversed(self._classes):
            if type(module) is _WatchedModule and not any(
                    module in (m for m, _ in i._classes) for i in _installations):  # fmt: skip
                module.__class__ = cls
        self._classes.clear()
        for cls, name, original in reversed(self._patched):
            if original is None:
                delattr(cls, name)
            else:
                setattr(cls, name, original)
        self._patched.clear()
        for name, module in self._saved_modules.items():
            if module is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = module
        if self._saved_warn is not None:
            warnings.warn = self._saved_warn


def install(ttnn: types.ModuleType, recorder: Recorder) -> Installation:
    """Put `recorder` between the program and `ttnn`; returns a handle for uninstall()."""
    installation = Installation(recorder, ttnn)
    installation.install()
    return installation
