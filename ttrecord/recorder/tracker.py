"""Recording ttnn's trace allocation tracker opt-outs (`ttnn.tools.trace_allocation_tracker`).

`acknowledge_corruptible(tensor)` is recorded as an ordinary call (its input is the tensor,
so the event names the acknowledged buffer), and so is the classmethod form
`TraceAllocationTracker.acknowledge_corruptible(tensor)`: the class reaches the program behind
a proxy whose `acknowledge_corruptible` records (everything else is the class's own). `corruptible_allocation_scope(mesh_device)` is a
context manager: its call is recorded too, and the manager it returns is wrapped so entering
and leaving it become `corruptible_scope_begin` / `corruptible_scope_end` notes on that
device. TR004 reads both to tell an acknowledged post-capture allocation from a mistake.
"""

from __future__ import annotations

import functools
from typing import Any

import wrapt

from ttrecord.events import CORRUPTIBLE_SCOPE, CORRUPTIBLE_SCOPE_BEGIN, CORRUPTIBLE_SCOPE_END, Kind
from ttrecord.recorder.recorder import Recorder

SCOPE = CORRUPTIBLE_SCOPE
TRACKER_CLASS = "TraceAllocationTracker"
ACKNOWLEDGE = "acknowledge_corruptible"


class TrackerClassProxy(wrapt.ObjectProxy):
    """`TraceAllocationTracker` as the program sees it: its classmethod acknowledgement is
    recorded as `TraceAllocationTracker.acknowledge_corruptible`, the module function's twin."""

    def __init__(self, cls: type, recorder: Recorder, qualname: str) -> None:
        super().__init__(cls)
        method = getattr(cls, ACKNOWLEDGE, None)
        self._self_ack = None if method is None else wrapt.FunctionWrapper(
            method, functools.partial(recorder.call, f"{qualname}.{ACKNOWLEDGE}", Kind.OP))

    def __getattr__(self, name: str) -> Any:
        if name == ACKNOWLEDGE and self._self_ack is not None:
            return self._self_ack
        return getattr(self.__wrapped__, name)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.__wrapped__(*args, **kwargs)

    def __instancecheck__(self, obj: Any) -> bool:
        return isinstance(obj, self.__wrapped__)

    def __mro_entries__(self, bases: tuple) -> tuple:
        return (self.__wrapped__,)


class _RecordedScope(wrapt.ObjectProxy):
    """The tracker's context manager, with its entry and exit recorded as notes."""

    def __init__(self, manager: Any, recorder: Recorder, device: int | None) -> None:
        super().__init__(manager)
        self._self_recorder = recorder
        self._self_device = device

    def __enter__(self) -> Any:
        value = self.__wrapped__.__enter__()
        self._note(CORRUPTIBLE_SCOPE_BEGIN)
        return value

    def __exit__(self, *exc: Any) -> Any:
        self._note(CORRUPTIBLE_SCOPE_END)  # never raises
        return self.__wrapped__.__exit__(*exc)

    def _note(self, name: str) -> None:
        recorder = self._self_recorder
        if recorder.off:
            return
        try:
            site = recorder.sites.site_id(recorder.sites.user_frame(1)) if recorder.callsites else None
            recorder.point("note", name, {"device": self._self_device}, site)
        except Exception as exc:  # a recorder bug must not break the program
            recorder._broken(exc)


def scope_wrapper(recorder: Recorder, name: str, kind: Kind) -> Any:
    """wrapt's wrapper for `corruptible_allocation_scope`: the call, then its manager wrapped."""

    def wrapper(wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
        manager = recorder.call(name, kind, wrapped, instance, args, kwargs)
        dev = args[0] if args else kwargs.get("mesh_device")
        try:
            device = recorder.devices.id_of(dev) if type(dev) in recorder.devices.types else None
        except Exception:
            device = None
        return _RecordedScope(manager, recorder, device)

    return wrapper
