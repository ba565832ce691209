"""Who keeps a post-capture buffer alive at a replay: the Python references that hold it.

ttnn's trace allocation tracker (with `TT_METAL_TRACE_ALLOC_TRACKING_TRACEBACKS=1`) names the
variable that keeps an unsafe buffer alive (`self.some_list[3]`); TR004 names only the line
that allocated it. So at `execute_trace` of a trace, when buffers allocated after that trace's
capture are still alive on its device, the recorder walks the program's frames (every thread),
their locals and, to a bounded depth, the lists, tuples, dicts and object attributes they
reach, for the tensors owning those buffers, and writes a `referrers` note under the
`execute_trace` call: `{"buffers": [{"buffer_type", "address", "held_by": ["step: self.kv[3]",
...], "at": ["/abs/model.py:42", ...]}]}` (`at`: the line each holding frame was running).

It costs nothing when no such buffer exists: the ledger's generation (bumped by every
allocation and free it records) is compared with its value when the trace's buffers were last
found clean; when it moved, only the ledger entries appended since the trace's end are looked
at (none in a loop that frees what it allocates between replays), and the tensors the ledger
knows only when one of those is still live (`python -m benchmarks.referrer_scan`).
"""

from __future__ import annotations

import sys
from collections import deque
from inspect import CO_OPTIMIZED
from types import FrameType
from typing import Any


MAX_DEPTH = 6  # containers and attributes followed below a frame's locals
MAX_NODES = 50_000  # objects visited per scan, whatever the program holds
MAX_PATHS = 4  # references named per buffer
_KEY, _LIVE = 0, 4  # ledger entry fields (ledger._KEY, ledger._LIVE)
_SNAPSHOT_LOCALS = sys.version_info < (3, 13)


class Referrers:
    """The live buffers at each trace's end, and the scan at its replays."""

    def __init__(self, recorder: Any) -> None:
        self._recorder = recorder
        # (device, trace) -> (ledger generation, buffer keys live on the device) at its end
        self._at_end: dict[tuple, tuple[int, frozenset]] = {}
        # (device, trace) -> the ledger's entries at its end, by id (held, so ids stay theirs)
        self._entries_at_end: dict[tuple, dict[int, list]] = {}

    def on_end(self, device: int | None, trace: int | None) -> None:
        ledger = self._recorder.allocations
        keys = frozenset(k for k, e in ledger.entries.items() if e[_LIVE] and k[0] == device)
        self._at_end[(device, trace)] = (ledger.generation, keys)
        self._entries_at_end[(device, trace)] = {id(e): e for e in ledger.entries.values()}

    def on_release(self, device: int | None, trace: int | None) -> None:
        self._at_end.pop((device, trace), None)
        self._entries_at_end.pop((device, trace), None)

    def _allocated_since(self, device: int | None, trace: int | None, before: frozenset) -> bool:
        """Whether a buffer allocated after the trace's end is live on its device. The ledger
        keeps its entries in allocation order (a freed key is removed, a new one appended), so
        only the entries after the newest one that existed at the end are looked at: a loop
        that allocates and frees between replays leaves none, and costs nothing here."""
        existed = self._entries_at_end.get((device, trace), {})
        for entry in reversed(self._recorder.allocations.entries.values()):
            if id(entry) in existed:
                return False
            key = entry[_KEY]
            if entry[_LIVE] and key[0] == device and key[1] != "TRACE" and key not in before:
                return True
        return False

    def on_execute(self, device: int | None, trace: int | None) -> dict | None:
        """The note's args when post-capture buffers are alive at this replay, else None."""
        known = self._at_end.get((device, trace))
        ledger = self._recorder.allocations
        if known is None or known[0] == ledger.generation:
            return None  # nothing allocated or freed since the capture: the common case
        before = known[1]
        if not self._allocated_since(device, trace, before):
            self._at_end[(device, trace)] = (ledger.generation, before)
            return None  # allocations since the capture were all freed again
        # buffers a live tensor object still owns (a tensor that died is gone from `_owner`
        # at once, before its free is counted); buffers no tensor names are not Python's
        owners: dict[int, tuple] = {}
        hazards: set[tuple] = set()
        for ident, entry in ledger._owner.items():
            key = entry[_KEY]
            if entry[_LIVE] and key[0] == device and key[1] != "TRACE" and key not in before:
                owners[ident] = key
                hazards.add(key)
        if not hazards:  # the next replay need not look again until something changes
            self._at_end[(device, trace)] = (ledger.generation, before)
            return None
        held = _held_by(owners, self._recorder)
        return {"buffers": [
            {"buffer_type": k[1], "address": k[2], "held_by": [p for p, _ in held.get(k, [])],
             "at": [a for _, a in held.get(k, [])]}
            for k in sorted(hazards, key=lambda k: (k[1], k[2]))
        ]}  # fmt: skip


def _held_by(owners: dict[int, tuple], recorder: Any) -> dict[tuple, list[tuple[str, str]]]:
    """Paths from the program's frames to the tensors in `owners` (by id), per buffer key,
    each with the line its frame was running ("file:line")."""
    found: dict[tuple, list[tuple[str, str]]] = {}
    if not owners:
        return found
    internal = recorder.sites.is_internal
    skip = {id(recorder)}
    tensor_type = recorder.tensor_type
    seen: set[int] = set()
    queue: deque = deque()
    for frame in _frames():
        if internal(frame.f_code):
            continue
        where = frame.f_code.co_name
        line = f"{frame.f_code.co_filename}:{frame.f_lineno}"
        local = frame.f_locals
        for name, value in list(local.items()):
            queue.append((value, f"{where}: {name}", 0, line))
        if frame.f_code.co_flags & CO_OPTIMIZED and _SNAPSHOT_LOCALS:
            # Before Python 3.13 a function's f_locals is a snapshot dict kept on the frame:
            # left filled it would keep the program's tensors alive after their `del`
            local.clear()
    visited = 0
    while queue and visited < MAX_NODES:
        obj, path, depth, line = queue.popleft()
        ident = id(obj)
        if ident in seen or ident in skip:
            continue
        seen.add(ident)
        visited += 1
        key = owners.get(ident)
        if key is not None:
            paths = found.setdefault(key, [])
            if len(paths) < MAX_PATHS:
                paths.append((path, line))
            continue
        if depth >= MAX_DEPTH or type(obj) is tensor_type:
            continue
        for child, child_path in _children(obj, path):
            queue.append((child, child_path, depth + 1, line))
    return found


def _frames() -> list[FrameType]:
    """Every thread's frames, innermost first (the calling thread's first)."""
    out: list[FrameType] = []
    me = sys._getframe(1)
    for frame in [me, *(f for tid, f in sys._current_frames().items() if f is not me)]:
        f: FrameType | None = frame
        while f is not None:
            out.append(f)
            f = f.f_back
    return out


def _children(obj: Any, path: str) -> list[tuple[Any, str]]:
    kind = type(obj)
    if kind is list or kind is tuple:
        return [(x, f"{path}[{i}]") for i, x in enumerate(obj[:1000])]
    if kind is dict:
        return [(v, f"{path}[{k!r}]") for k, v in list(obj.items())[:1000]
                if isinstance(k, (str, int))]  # fmt: skip
    if isinstance(obj, (type, type(sys), type(_frames))):
        return []  # classes, modules and functions: not where a program keeps its tensors
    attrs = getattr(obj, "__dict__", None)
    if type(attrs) is dict:
        return [(v, f"{path}.{k}") for k, v in list(attrs.items())[:1000]]
    return []
