"""Column widths from the content, shrunk by priority to fit the terminal.

Every table sizes its columns to what they hold; when that is wider than the screen, the
columns that matter least give way first (down to their minimum), and only then are optional
columns dropped. Numbers never shrink (a cut sequence number or count is a wrong one); call
sites shrink from the middle, keeping the file name and the line.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

END, MIDDLE, NEVER = "end", "middle", "never"


@dataclass(frozen=True)
class Column:
    title: str
    priority: int = 1  # the higher, the later it gives way
    min: int = 0  # narrowest it shrinks to (0: its title's width)
    shorten: str = END  # END: cut the tail; MIDDLE: keep both ends (paths); NEVER: numbers
    optional: bool = False  # may be left out when even the minimums do not fit
    max: int = 0  # widest it grows to (0: no limit)

    @property
    def floor(self) -> int:
        return max(self.min or len(self.title), 1)


def as_column(column: Column | str) -> Column:
    return column if isinstance(column, Column) else Column(column)


def fit(columns: Sequence[Column], naturals: Sequence[int], width: int, gap: int = 1) -> list[int]:
    """Widths for `columns` whose content wants `naturals`, within `width` cells including a
    `gap` after each column; 0 means the column is left out."""
    widths = [min(n, c.max) if c.max else n for c, n in zip(columns, naturals, strict=True)]
    widths = [max(w, len(c.title)) if c.shorten == NEVER else w for c, w in zip(columns, widths, strict=True)]

    def total() -> int:
        return sum(w + gap for w in widths if w)

    # Shrink the least important first, each down to its floor.
    for i in sorted(range(len(columns)), key=lambda i: columns[i].priority):
        if total() <= width:
            return widths
        c = columns[i]
        if c.shorten == NEVER:
            if c.optional:  # cannot shrink: gives way whole, in its turn
                widths[i] = 0
            continue
        floor = min(widths[i], c.floor)
        widths[i] = max(floor, widths[i] - (total() - width))
    # Still too wide: leave out optional columns, least important first.
    for i in sorted(range(len(columns)), key=lambda i: columns[i].priority):
        if total() <= width:
            break
        if columns[i].optional:
            widths[i] = 0
    return widths


def shorten(text: str, width: int, how: str = END) -> str:
    """`text` in at most `width` cells, cut as the column says (see Column.shorten)."""
    if len(text) <= width or how == NEVER:
        return text
    if width <= 1:
        return "…"[:width]
    if how == MIDDLE:
        return shorten_middle(text, width)
    return text[: width - 1] + "…"


def shorten_middle(text: str, width: int) -> str:
    """A path or call site cut from the middle: the directories go first, then the middle of
    the file name; the end (file name, `:line`) stays as long as it can."""
    if len(text) <= width:
        return text
    name = text.rsplit("/", 1)[-1]
    if len(name) + 1 <= width:
        keep = width - 1 - len(name)
        return text[:keep] + "…" + name
    # The file name alone is too long: keep its end (extension and line) and its start.
    _, colon, line = name.rpartition(":")
    tail = max(min(len(name), len(line) + 1 + 4 if colon else 4), (width - 1) * 2 // 3)
    tail = min(tail, width - 1)
    head = width - 1 - tail
    return name[:head] + "…" + name[len(name) - tail :]
