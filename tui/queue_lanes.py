"""The timeline's command-queue lanes: one column per queue and one for the host, side by side.

A program that uses two command queues is ordered only by events and host waits, so the
timeline shows where each call went and the edges between queues: a command as `■` in its
queue's lane, `record_event` as `◆e3` in the queue that records it, `wait_for_event` as
`◀e3←1` in the waiting queue (e3 was recorded on CQ 1), a host wait (`event_synchronize`,
`synchronize_device`, a blocking read or replay) as `⇐` in the host lane. The two accesses of
a TR012 race are marked `⚡A` and `⚡B`. Pure functions of the timeline rows: no widget here.
"""

from __future__ import annotations

import re

from ttrecord.store.reader import TimelineRow

LANE = 15  # characters per lane
_EVENT_ID = re.compile(r"^(\d+) ")  # the recorder's serial (recorder/queues.py)
_EVENT_CQ = re.compile(r"cq_id\s*[=:]\s*(\d+)")
_COMMANDS = {"op": "op", "h2d": "write", "d2h": "read", "trace_execute": "replay"}


def event_label(key: object) -> str:
    """`e<serial>` from an event's key (only its digits reach the screen)."""
    m = _EVENT_ID.search(key) if isinstance(key, str) else None
    return f"e{m.group(1)}" if m else "e?"


def _event_cq(key: object) -> int | None:
    m = _EVENT_CQ.search(key) if isinstance(key, str) else None
    return int(m.group(1)) if m else None


def lanes_of(row: TimelineRow) -> dict[str, str]:
    """What the row puts in each lane: {"0": text, "1": text, "host": text}."""
    queue = row.queue or {}
    cq = queue.get("cq", row.cq)
    cq = int(cq) if isinstance(cq, int) else 0
    short = row.name.rsplit(".", 1)[-1]
    out: dict[str, str] = {}
    if row.kind in _COMMANDS and (row.device is not None or row.kind == "trace_execute"):
        blocking = queue.get("blocking", True) is not False
        text = "■ " + _COMMANDS[row.kind]
        if row.kind in ("d2h", "trace_execute"):
            if blocking:
                out["host"] = f"⇐ CQ{cq}"
            else:
                text += " ~"  # the host goes on
        out[str(cq)] = text
    elif row.kind == "sync":
        key = queue.get("event")
        if short == "record_event":
            out[str(cq)] = "◆" + event_label(key)
        elif short == "wait_for_event":
            src = _event_cq(key)
            out[str(cq)] = "◀" + event_label(key) + (f"←{src}" if src is not None else "")
        elif short == "event_synchronize":
            out["host"] = "⇐ " + event_label(key)
        else:
            named = queue.get("cq", row.cq)
            out["host"] = f"⇐ CQ{named}" if named is not None else "⇐ all"
    return out


class QueueLanes:
    """Renders lane cells for `queues` command queues; `marks` maps a seq to a race label."""

    def __init__(self, queues: int = 2, marks: dict[int, str] | None = None) -> None:
        self.queues = max(queues, 2)
        self.marks = dict(marks or {})

    @property
    def width(self) -> int:
        return LANE * (self.queues + 1)

    def header(self) -> str:
        return "".join(f"CQ{q}".ljust(LANE) for q in range(self.queues)) + "host".ljust(LANE)

    def cell(self, row: TimelineRow) -> str:
        lanes = lanes_of(row)
        mark = self.marks.get(row.seq)
        if mark is not None:
            # the race mark goes where the access is
            where = next((k for k in lanes if k != "host"), next(iter(lanes), "0"))
            lanes[where] = f"⚡{mark} " + lanes.get(where, "")
        parts = [lanes.get(str(q), "│") for q in range(self.queues)] + [lanes.get("host", "│")]
        return "".join(p[: LANE - 1].ljust(LANE) for p in parts)


def race_marks(evidence: dict) -> dict[int, str]:
    """{seq: "A"/"B"} for a TR012 finding's two accesses (its `first` and `second`)."""
    marks: dict[int, str] = {}
    for key, label in (("first", "A"), ("second", "B")):
        part = evidence.get(key)
        if isinstance(part, dict) and isinstance(part.get("event"), int):
            marks[part["event"]] = label
    return marks
