"""Tables filled in one go, their columns sized to the content and fitted to the width.

DataTable measures auto-width columns on idle; a render that lands before that pass can stick
with header-wide columns. Measuring here makes the first render the final one. Columns are
fitted by priority (ttrecord.tui.columns), cells shortened the way their column says (call
sites from the middle, numbers never), and a `FitTable` fits them again when resized.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from rich.text import Text
from textual.widgets import DataTable

from ttrecord.textsafe import clean
from ttrecord.tui.columns import Column, as_column, fit, shorten

SCROLLBAR = 2  # cells a vertical scrollbar may take


class FitTable(DataTable):
    """A DataTable that keeps what it was filled with and refits it when its width changes."""

    def __init__(self, **kwargs) -> None:  # type: ignore[no-untyped-def]
        super().__init__(**kwargs)
        self._filled: tuple | None = None
        self._fitted_width = 0

    def on_resize(self) -> None:
        if self._filled is not None and self.size.width != self._fitted_width:
            fill_table(self, *self._filled)


def _plain(cell: object) -> str:
    text = cell.plain if isinstance(cell, Text) else str(cell)
    return text.split("\n", 1)[0] if text else ""


def _cut(cell: object, width: int, how: str) -> Text:
    """The cell as Text (a str would be parsed as markup: session text is data), shortened."""
    text = cell if isinstance(cell, Text) else Text(clean(str(cell)))
    if text.cell_len <= width:
        return text
    short = shorten(text.plain, width, how)
    if isinstance(cell, Text) and short.startswith(text.plain[: max(0, width - 1)]):
        out = text.copy()
        out.truncate(width, overflow="ellipsis")
        return out
    return Text(short, style=text.style)


def available_width(table: DataTable) -> int:
    width = table.size.width or (table.app.size.width if table.is_attached else 80)
    return max(10, width - SCROLLBAR)


def fill_table(table: DataTable, columns: Sequence[Column | str], rows: Iterable[Sequence[object]],
               keys: Sequence[str] | None = None) -> None:  # fmt: skip
    cols = [as_column(c) for c in columns]
    rows = [list(r) for r in rows]
    naturals = [len(c.title) for c in cols]
    for row in rows:
        for i, cell in enumerate(row):
            naturals[i] = max(naturals[i], len(_plain(cell)))
    if isinstance(table, FitTable):
        table._filled = (columns, rows, keys)
        table._fitted_width = table.size.width
    widths = fit(cols, naturals, available_width(table), gap=2 * table.cell_padding)
    shown = [i for i, w in enumerate(widths) if w]
    cursor = table.cursor_row
    table.clear(columns=True)
    for i in shown:
        table.add_column(shorten(cols[i].title, widths[i]), width=widths[i])
    for n, row in enumerate(rows):
        table.add_row(*[_cut(row[i], widths[i], cols[i].shorten) for i in shown],
                      key=keys[n] if keys else None)  # fmt: skip
    if rows:
        table.move_cursor(row=min(max(cursor, 0), len(rows) - 1), animate=False)
