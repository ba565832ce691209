"""The records one recorded call produces, one builder per record type, so the recorder's
path reads as what it writes. Each is one Python call around the declared builders in
records.py (every field by name)."""

from __future__ import annotations

from typing import Any

from ttrecord.events import NoteKind
from ttrecord.recorder.records import new_end, new_point

_CACHE_MISS = NoteKind.PROGRAM_CACHE_MISS.value  # plain str: marshal writes exact types only


def raised_end(seq: int, t_ns: int, exc: BaseException, device: int | None,
               trace: int | None) -> tuple:  # fmt: skip
    """The END of a call that raised `exc`."""
    return new_end(seq=seq, t_ns=t_ns, status="raised", error=f"{type(exc).__name__}: {exc}",
                   outputs=(), device=device, trace=trace, extra=None)  # fmt: skip


def returned_end(seq: int, t_ns: int, outputs: tuple, device: int | None, trace: int | None,
                 extra: dict | None) -> tuple:  # fmt: skip
    """The END of a call that returned (`outputs`: its tensors described)."""
    return new_end(seq=seq, t_ns=t_ns, status="ok", error=None, outputs=outputs, device=device,
                   trace=trace, extra=extra)  # fmt: skip


def cache_miss_note(seq: int, parent: int, t_ns: int, thread: int, phase: str,
                    device: int | None, trace: int | None, region: str | None,
                    new_entries: int) -> tuple:  # fmt: skip
    """The note that call `parent` compiled `new_entries` programs while a trace was live
    (TR013/TR014)."""
    return new_point(seq=seq, parent=parent, t_ns=t_ns, thread=thread, kind="note",
                     name=_CACHE_MISS, phase=phase, device=device, trace=trace,
                     site_id=None, args={"new_entries": new_entries}, region=region,
                     buffer=None)  # fmt: skip


def buffer_point(seq: int, parent: int | None, t_ns: int, thread: int, change: str, phase: str,
                 trace: int | None, region: str | None, buffer: tuple,
                 args: dict[str, Any] | None) -> tuple:  # fmt: skip
    """An ALLOC or FREE (`change`) of `buffer`, on the buffer's device."""
    return new_point(seq=seq, parent=parent, t_ns=t_ns, thread=thread, kind=change, name=change,
                     phase=phase, device=buffer[0], trace=trace, site_id=None, args=args,
                     region=region, buffer=buffer)  # fmt: skip
