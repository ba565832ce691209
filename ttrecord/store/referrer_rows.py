"""The `referrers` notes of a session: at an `execute_trace`, which Python references held the
buffers allocated after that trace's capture (`ttrecord.recorder.referrers`).

TR004 reports a post-capture allocation at the line that made it; these notes say, at the
replay that found it alive, which variable kept it (`main: bias`, `step: self.kv[3]`).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from ttrecord.events import NoteKind

if TYPE_CHECKING:
    from ttrecord.store.reader import Session

_SQL = "SELECT parent, args FROM events WHERE kind = 'note' AND name = ? AND parent IS NOT NULL ORDER BY seq"


def referrers(session: Session) -> dict[int, dict[tuple[str, int], list[str]]]:
    """execute_trace seq -> {(buffer type, address): the references holding that buffer}."""
    out: dict[int, dict[tuple[str, int], list[str]]] = {}
    for parent, args in session.query(_SQL, (NoteKind.REFERRERS.value,)):
        try:
            data: Any = json.loads(args) if args else {}
            held = {(str(b["buffer_type"]), int(b["address"])): [str(p) for p in b.get("held_by", [])]
                    for b in data.get("buffers", [])}  # fmt: skip
        except (ValueError, TypeError, KeyError, AttributeError):
            continue  # a damaged note is data, not an error
        out.setdefault(int(parent), {}).update(held)
    return out
