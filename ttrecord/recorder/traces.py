"""Which traces each device has: the one being captured, and those captured and not released.

A call's phase follows from it: a call while its device captures is part of that capture; a
call with no device named while any device captures belongs to the first capturing device
(ttnn records it there). The live traces decide whether a compile is worth a note (TR013/TR014
look at compiles while a trace lives).
"""

from __future__ import annotations

from typing import Any

from ttrecord.events import Kind, Phase

_EAGER, _CAPTURE, _REPLAY = Phase.EAGER.value, Phase.CAPTURE.value, Phase.REPLAY.value


def trace_id(value: Any) -> int | None:
    """A trace id as an int (ttnn returns an int-like object), else None."""
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


class Traces:
    """Per device: the trace being captured (`capturing`) and the live ones (`live`).

    The recorder reads `capturing` on every call (a plain dict: empty means no capture)."""

    def __init__(self) -> None:
        self.capturing: dict[int | None, int | None] = {}  # device -> trace being captured
        self.live: dict[int | None, set] = {}  # device -> traces captured, not released

    def begin(self, device: int | None, trace: int | None) -> None:
        self.capturing[device] = trace
        self.live.setdefault(device, set()).add(trace)

    def end(self, device: int | None) -> None:
        self.capturing.pop(device, None)

    def release(self, device: int | None, trace: int | None) -> None:
        live = self.live.get(device)
        if live is not None:
            live.discard(trace)
            if not live:
                del self.live[device]

    def close_device(self, device: int | None) -> None:
        self.live.pop(device, None)

    def phase(self, kind: Kind, device: int | None, args: tuple, kwargs: dict) -> tuple:
        """(phase, trace, device) of a user call of `kind` naming `device`."""
        if kind is Kind.TRACE_EXECUTE or kind is Kind.TRACE_RELEASE:
            trace = trace_id(args[1] if len(args) > 1 else kwargs.get("trace_id"))
            return (_REPLAY if kind is Kind.TRACE_EXECUTE else _EAGER), trace, device
        capturing = self.capturing
        if capturing:
            if device is None:
                device = next(iter(capturing))
            elif device not in capturing:
                return _EAGER, None, device
            return _CAPTURE, capturing[device], device
        return _EAGER, None, device

    def between_calls(self) -> tuple[str, int | None, int | None]:
        """(phase, device, trace) of an event outside any call: the first capture, if any."""
        if self.capturing:
            device, trace = next(iter(self.capturing.items()))
            return _CAPTURE, device, trace
        return _EAGER, None, None
