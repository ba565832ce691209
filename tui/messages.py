"""Messages that thread workers post back to the screens (plain dataclasses)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from textual.message import Message

from ttrecord.store.reader import TimelineRow


@dataclass
class Loaded(Message):
    """A screen's snapshot is ready (`data`), or could not be built (`error`)."""

    data: Any
    error: str | None = None


@dataclass
class FindingsComputed(Message):
    """The analysis ran on open (the session had no stored findings)."""

    findings: tuple[Any, ...]
    error: str | None = None


@dataclass
class LiveFindings(Message):
    """The analysis of a session still being recorded, as far as it could decide."""

    findings: tuple[Any, ...]
    started_at: float
    error: str | None = None


@dataclass
class Grown(Message):
    """A running session's timeline has `total` rows now (for the filter generation shown)."""

    generation: int
    total: int
    status: str


@dataclass
class PageLoaded(Message):
    """One page of timeline rows for the filter generation that asked for it."""

    generation: int
    page: int
    rows: list[TimelineRow]


@dataclass
class RowCount(Message):
    generation: int
    total: int
    index: int | None = None  # where the event to jump to sits in the filtered rows
    first_seq: int | None = None  # set when row i is seq first_seq + i (no filter, no gaps)
    error: str | None = None  # the session could not be read
    last_seq: int | None = None  # the session's last seq (the seq column is as wide as it)


@dataclass
class BufferUsers(Message):
    """The calls that touched a buffer, for the memory map's detail pane."""

    buffer_id: int
    rows: list[tuple[TimelineRow, str]]  # (call, "reads" / "writes")


@dataclass
class EventChosen(Message):
    """The user chose an event (enter or click) in a list of events."""

    seq: int


@dataclass
class RowHighlighted(Message):
    """The cursor of a line-based view moved to `index`."""

    index: int
