"""Recording the program-cache switches a program flips on its device.

`device.disable_and_clear_program_cache()` empties the cache (every op compiles again) and
`device.enable_program_cache()` turns it back on; ttnn calls them on the device object, so the
module proxy never sees them. The device's class gets the three methods wrapped once, when a
device of it opens: each call becomes a note on that device (`program_cache_clear`,
`program_cache_disable` ... see `NOTES`) at the user's line, and the entry count the recorder
compares against is taken again after it, so the next compile is noted even though the count
went down in between (TR013 names the clear; TR014 sees the compile).
"""

from __future__ import annotations

from typing import Any

import wrapt

from ttrecord.events import PROGRAM_CACHE_CLEAR, PROGRAM_CACHE_ENABLE

# method -> the note it leaves
NOTES = {
    "disable_and_clear_program_cache": PROGRAM_CACHE_CLEAR,
    "clear_program_cache": PROGRAM_CACHE_CLEAR,
    "enable_program_cache": PROGRAM_CACHE_ENABLE,
}


_recorder: Any = None  # the recorder the wrapped methods report to (the latest to watch)
_watched: list[type] = []  # classes whose methods are wrapped already


def watch(cls: type, recorder: Any) -> None:
    """Wrap the cache methods `cls` has, once per class (a later recorder in the same process,
    as in tests, takes the wrappers over: they stay, and pass calls through when it is off)."""
    global _recorder
    _recorder = recorder
    if any(c is cls for c in _watched):
        return
    _watched.append(cls)
    for method, note in NOTES.items():
        if getattr(cls, method, None) is None:
            continue
        try:
            wrapt.wrap_function_wrapper(cls, method, _wrapper(note, method))
        except (AttributeError, TypeError):  # a class that refuses new attributes
            continue


def _wrapper(note: str, method: str) -> Any:
    def wrapper(wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
        result = wrapped(*args, **kwargs)
        recorder = _recorder
        if recorder is None or recorder.off:
            return result
        try:
            device = recorder.devices.id_of(instance)
            site = recorder.sites.site_id(recorder.sites.user_frame(1)) if recorder.callsites else None
            with recorder._lock:
                recorder.cache_count.rebase()  # a compile after a clear counts
            recorder.point("note", note, {"device": device, "method": method}, site, write=True)
        except Exception as exc:  # a recorder bug must not break the program
            recorder._broken(exc)
        return result

    return wrapper


class EntryCount:
    """How many entries the program cache gained since the last look, over the open devices.

    A compile leaves kernel binaries (buffers no tensor names), so the recorder looks after
    every op; one call per device, cheap on real ttnn. A backend without the count is not asked
    again. `rebase()` takes the count a later compile is measured from (a device opened, a
    capture began, the cache was cleared: the count went down, the next compile still counts).
    """

    _UNKNOWN, _UNSUPPORTED = -1, -2

    def __init__(self, devices: Any) -> None:
        self._devices = devices  # has .objects: the open device objects
        self._entries = self._UNKNOWN

    def grew(self) -> int:
        if self._entries == self._UNSUPPORTED:
            return 0
        total = 0
        for dev in self._devices.objects:
            try:
                total += int(dev.num_program_cache_entries())
            except Exception:
                self._entries = self._UNSUPPORTED
                return 0
        grew = total - self._entries if self._entries >= 0 else 0
        self._entries = total
        return max(grew, 0)

    def rebase(self) -> None:
        self.grew()
