"""The `referrers` notes of a session: at an `execute_trace`, which Python references held the
buffers allocated after that trace's capture (`ttrecord.recorder.referrers`).

TR004 reports a post-capture allocation at the line that made it; these notes say, at the
replay that found it alive, which variable kept it (`main: bias`, `step: self.kv[3]`) and the
line its frame was running.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ttrecord.events import NoteKind

if TYPE_CHECKING:
    from ttrecord.store.reader import Session

_SQL = "SELECT parent, args FROM events WHERE kind = 'note' AND name = ? AND parent IS NOT NULL ORDER BY seq"
Holder = tuple[str, "str | None"]  # (path "function: name[0].attr", "file:line" or None)


def parse_note(args: Any) -> dict[tuple[str, int], list[Holder]]:
    """(buffer type, address) -> its holders, from one note's args; {} for a damaged note (a
    session's text is data, not an error)."""
    try:
        data: Any = json.loads(args) if isinstance(args, str) else (args or {})
        out: dict[tuple[str, int], list[Holder]] = {}
        for b in data.get("buffers", []):
            paths = [str(p) for p in b.get("held_by", [])]
            at = b.get("at") or []
            lines = [str(a) if a else None for a in at] if isinstance(at, list) else []
            lines += [None] * (len(paths) - len(lines))
            out[(str(b["buffer_type"]), int(b["address"]))] = list(zip(paths, lines))
        return out
    except (ValueError, TypeError, KeyError, AttributeError):
        return {}


def describe(holder: Holder) -> str:
    """`self.kv[3] (model.py:42)`: the reference, then the line its frame was running (the
    function's name when the line was not recorded)."""
    path, at = holder
    function, _, name = path.partition(": ")
    if not name:
        function, name = "", path
    if at:
        file, _, line = at.rpartition(":")
        return f"{name} ({Path(file).name}:{line})"
    return f"{name} in {function}" if function else name


def referrers(session: Session) -> dict[int, dict[tuple[str, int], list[str]]]:
    """execute_trace seq -> {(buffer type, address): the references holding that buffer}."""
    out: dict[int, dict[tuple[str, int], list[str]]] = {}
    for parent, args in session.query(_SQL, (NoteKind.REFERRERS.value,)):
        held = {key: [p for p, _ in holders] for key, holders in parse_note(args).items()}
        if held:
            out.setdefault(int(parent), {}).update(held)
    return out
