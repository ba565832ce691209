"""Recording sub-device managers and global semaphores.

Sub-device managers are methods of the device (`mesh_device.load_sub_device_manager(id)`, ...),
which the module proxy never sees: as with the program-cache switches, the device's class gets
them wrapped once, when a device of it opens. Each call leaves a `sub_device_manager` note at
the user's line, after the call, saying which method, on which device, which manager, and the
error when ttnn refused it (a load inside a capture raises "Cannot reset worker state during
trace capture"). The rules follow the active manager per device from these notes.

Global semaphores are values ops take, not tensors, so the op records do not show them. The
proxy routes the semaphore calls, the collective ops and the trace calls through `wrapper()`:
`create_global_semaphore` leaves a `global_semaphore` note numbering the semaphore (with its
address, device and initial value), `reset_global_semaphore_value` one with the new value, a
collective op run while a capture is active one naming the semaphores it was given (`use`,
in the capture: the trace bakes their addresses in), and a semaphore whose last Python
reference went one saying it was freed (`free`, at the line that dropped it, written before the
next of these calls; ttnn frees its L1 buffer then). A semaphore type that takes no weak
references (a native class) has its frees unseen.
"""

from __future__ import annotations

import functools
import weakref
from types import FrameType
from typing import Any

import wrapt

from ttrecord.events import Kind, NoteKind

MANAGER_NOTE = NoteKind.SUB_DEVICE_MANAGER.value
SEMAPHORE_NOTE = NoteKind.GLOBAL_SEMAPHORE.value
METHODS = ("create_sub_device_manager", "load_sub_device_manager", "clear_loaded_sub_device_manager",
           "remove_sub_device_manager", "set_sub_device_stall_group", "reset_sub_device_stall_group")  # fmt: skip
SEMAPHORE_CALLS = frozenset({"create_global_semaphore", "reset_global_semaphore_value"})
TRACE_CALLS = frozenset({"begin_trace_capture", "end_trace_capture", "execute_trace", "release_trace"})
_CCL_WORDS = ("all_gather", "all_reduce", "reduce_scatter", "all_broadcast", "all_to_all", "broadcast",
              "point_to_point", "ccl", "_async")  # fmt: skip

_recorder: Any = None  # the recorder the wrapped device methods report to (the latest to watch)
_watched: list[type] = []


def routed(short: str) -> bool:
    """Whether the proxy sends calls of this ttnn name through `wrapper()`."""
    return short in SEMAPHORE_CALLS or short in TRACE_CALLS or any(w in short for w in _CCL_WORDS)


# -- sub-device managers -------------------------------------------------------------------


def watch(cls: type, recorder: Any) -> None:
    """Wrap the manager methods `cls` has, once per class (a later recorder takes them over)."""
    global _recorder
    _recorder = recorder
    if any(c is cls for c in _watched):
        return
    _watched.append(cls)
    for method in METHODS:
        if getattr(cls, method, None) is None:
            continue
        try:
            wrapt.wrap_function_wrapper(cls, method, _method_wrapper(method))
        except (AttributeError, TypeError):  # a class that refuses new attributes
            continue


class _Numbers:
    """Numbers for opaque handles (manager ids, semaphores): the handle's own integer when it
    has one, else the order it was first seen in."""

    def __init__(self) -> None:
        self._seen: list[tuple[Any, int]] = []

    def of(self, handle: Any) -> int:
        try:
            return int(handle)
        except (TypeError, ValueError):
            pass
        for known, number in self._seen:
            if known is handle or known == handle:
                return number
        number = len(self._seen) + 1
        self._seen.append((handle, number))
        return number


_managers = _Numbers()


def _method_wrapper(method: str) -> Any:
    def wrapper(wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
        recorder = _recorder
        if recorder is None or recorder.off:
            return wrapped(*args, **kwargs)
        error: BaseException | None = None
        result = None
        try:
            result = wrapped(*args, **kwargs)
        except BaseException as exc:  # noted, then raised as it was
            error = exc
        try:
            note: dict[str, Any] = {"method": method, "device": recorder.devices.id_of(instance)}
            given = args[0] if args else next(iter(kwargs.values()), None)
            if method == "create_sub_device_manager" and error is None:
                note["manager"] = _managers.of(result)
            elif method in ("load_sub_device_manager", "remove_sub_device_manager") and given is not None:
                note["manager"] = _managers.of(given)
            elif method == "set_sub_device_stall_group" and given is not None:
                note["sub_device_ids"] = [int(getattr(s, "id", s)) if isinstance(getattr(s, "id", s), int)
                                          else str(s) for s in given]  # fmt: skip
            if error is not None:
                note["error"] = f"{type(error).__name__}: {error}"
            site = recorder.sites.site_id(recorder.sites.user_frame(1)) if recorder.callsites else None
            recorder.point("note", MANAGER_NOTE, note, site, write=True)
        except Exception as bug:  # a recorder bug must not break the program
            recorder._broken(bug)
        if error is not None:
            try:
                raise error
            finally:  # the traceback holds this frame: naming the error here would make a
                del error  # cycle keeping the program's frames (and tensors) alive until a GC
        return result

    return wrapper


# -- global semaphores ---------------------------------------------------------------------


class Semaphores:
    """The semaphores a program made, by object identity, and those freed since last asked."""

    def __init__(self) -> None:
        self.types: set[type] = set()
        self.numbers: dict[int, int] = {}  # id(semaphore) -> its number
        self.pending: list[tuple[int, Any]] = []  # freed: (number, user frame)
        self.count = 0


_semaphores: dict[int, Semaphores] = {}  # id(recorder) -> its semaphores


def _of(recorder: Any) -> Semaphores:
    found = _semaphores.get(id(recorder))
    if found is None:
        found = _semaphores[id(recorder)] = Semaphores()
    return found


def wrapper(recorder: Any, name: str, kind: Kind, short: str) -> Any:
    """wrapt's wrapper for a routed ttnn name: notes around `recorder.call`."""
    record = functools.partial(recorder.call, name, kind)

    def call(wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
        if recorder.off:
            return wrapped(*args, **kwargs)
        sems = _of(recorder)
        try:
            if sems.pending:
                _write_frees(recorder, sems)
            if sems.types and recorder.traces.capturing and short not in TRACE_CALLS:
                used = _used(sems, args, kwargs)
                if used:
                    recorder.point("note", SEMAPHORE_NOTE, {"event": "use", "op": name, "semaphores": used},
                                   _site(recorder, None), write=True)  # fmt: skip
        except Exception as bug:
            recorder._broken(bug)
        result = record(wrapped, instance, args, kwargs)
        try:
            if short == "create_global_semaphore":
                _created(recorder, sems, result, args, kwargs)
            elif short == "reset_global_semaphore_value":
                _reset(recorder, sems, args, kwargs)
        except Exception as bug:
            recorder._broken(bug)
        return result

    return call


def _site(recorder: Any, frame: Any) -> int | None:
    if not recorder.callsites:
        return None
    site: int | None = recorder.sites.site_id(frame if frame is not None else recorder.sites.user_frame(1))
    return site


def _used(sems: Semaphores, args: tuple, kwargs: dict) -> list[int]:
    used: list[int] = []
    for value in (*args, *kwargs.values()):
        items = value if isinstance(value, (list, tuple)) else (value,)
        for item in items:
            if type(item) in sems.types:
                number = sems.numbers.get(id(item))
                if number is not None:
                    used.append(number)
    return used


def _created(recorder: Any, sems: Semaphores, semaphore: Any, args: tuple, kwargs: dict) -> None:
    sems.types.add(type(semaphore))
    sems.count += 1
    number = sems.count
    sems.numbers[id(semaphore)] = number
    device_arg = args[0] if args else kwargs.get("mesh_device")
    initial = args[2] if len(args) > 2 else kwargs.get("initial_value")
    note: dict[str, Any] = {"event": "create", "semaphore": number, "device": recorder.devices.id_of(device_arg)}
    try:
        note["address"] = int(recorder.ttnn.get_global_semaphore_address(semaphore))
    except Exception:
        pass
    if isinstance(initial, int):
        note["initial_value"] = initial
    try:
        weakref.finalize(semaphore, _freed, sems, id(semaphore), number, recorder)
        note["frees_seen"] = True
    except TypeError:  # a native class without weak references: its frees go unseen
        note["frees_seen"] = False
    recorder.point("note", SEMAPHORE_NOTE, note, _site(recorder, None), write=True)


class _Frame:
    """A frame as it was (code, line, callers): a live frame's line moves on before the note
    that names it is written."""

    __slots__ = ("f_code", "f_lineno", "f_back")

    def __init__(self, f_code: Any, f_lineno: int, f_back: _Frame | None) -> None:
        self.f_code, self.f_lineno, self.f_back = f_code, f_lineno, f_back


def _snapshot(frame: FrameType | None, depth: int = 16) -> Any:
    frames: list[FrameType] = []
    while frame is not None and len(frames) < depth:
        if not frame.f_code.co_filename.endswith("weakref.py"):  # the finalizer's own frames
            frames.append(frame)
        frame = frame.f_back
    copy = None
    for f in reversed(frames):
        copy = _Frame(f.f_code, f.f_lineno, copy)
    return copy


def _freed(sems: Semaphores, key: int, number: int, recorder: Any) -> None:
    """The semaphore's last reference went (any thread, any point): keep the user's line and
    write the note at the next routed call (writing here could re-enter the log)."""
    if sems.numbers.get(key) == number:
        del sems.numbers[key]
    try:
        frame = _snapshot(recorder.sites.user_frame(1))
        while frame is not None and recorder.sites.is_internal(frame.f_code):
            frame = frame.f_back
    except Exception:
        frame = None
    sems.pending.append((number, frame))


def _write_frees(recorder: Any, sems: Semaphores) -> None:
    pending, sems.pending = sems.pending, []
    for number, frame in pending:
        recorder.point("note", SEMAPHORE_NOTE, {"event": "free", "semaphore": number},
                       _site(recorder, frame), write=True)  # fmt: skip


def _reset(recorder: Any, sems: Semaphores, args: tuple, kwargs: dict) -> None:
    semaphore = args[0] if args else kwargs.get("global_semaphore")
    value = args[1] if len(args) > 1 else kwargs.get("reset_value")
    number = sems.numbers.get(id(semaphore))
    if number is None:
        return
    recorder.point("note", SEMAPHORE_NOTE, {"event": "reset", "semaphore": number, "value": value},
                   _site(recorder, None), write=True)  # fmt: skip


def finish(recorder: Any) -> None:
    """Write the frees still pending (at the end of a recording)."""
    sems = _semaphores.get(id(recorder))
    if sems is not None and sems.pending:
        _write_frees(recorder, sems)
