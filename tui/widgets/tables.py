"""Filling a DataTable in one go, with column widths fixed from the content.

DataTable measures auto-width columns on idle; a render that lands before that pass can
stick with header-wide columns. Measuring here makes the first render the final one.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ttrecord.textsafe import clean
from rich.text import Text
from textual.widgets import DataTable

MAX_WIDTH = 60


def fill_table(table: DataTable, columns: Sequence[str], rows: Iterable[Sequence[object]],
               keys: Sequence[str] | None = None) -> None:  # fmt: skip
    rows = [list(r) for r in rows]
    widths = [len(c) for c in columns]
    for row in rows:
        for i, cell in enumerate(row):
            text = cell.plain if isinstance(cell, Text) else str(cell)
            widths[i] = max(widths[i], min(MAX_WIDTH, max((len(s) for s in text.split("\n")), default=0)))
    cursor = table.cursor_row
    table.clear(columns=True)
    for label, width in zip(columns, widths):
        table.add_column(label, width=width)
    for i, row in enumerate(rows):
        # A str cell would be parsed as markup: session text goes in as Text (data).
        table.add_row(*[c if isinstance(c, Text) else Text(clean(c)) for c in row],
                      key=keys[i] if keys else None)  # fmt: skip
    if rows:
        table.move_cursor(row=min(max(cursor, 0), len(rows) - 1), animate=False)
