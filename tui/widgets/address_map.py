"""The scaled memory map: addresses down (a scale, one step per row), seqs across, zoom and pan.

Each cell is an (address step × seq step) rectangle; it shows `█` for one buffer, a digit for
2–9 and `*` for more, so whatever the zoom one character never hides that many buffers share
it. Only the visible window is ever queried (aggregated in SQL, `ttrecord.store.map_grid`),
in a thread worker; until it arrives the previous window stays on screen.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.segment import Segment
from rich.style import Style
from textual import work
from textual.binding import Binding
from textual.message import Message
from textual.reactive import reactive
from textual.strip import Strip
from textual.widget import Widget

from ttrecord.errors import SessionError
from ttrecord.store.reader import buffer_cells
from ttrecord.tui.address_grid import Grid, Span, View, build_grid, cells_of
from ttrecord.tui.handle import SessionHandle

ZOOM = 4  # each zoom step shows a quarter (or four times) of the range
BAR = Style(color="white", bgcolor="dodger_blue3")
CAPTURED = Style(color="black", bgcolor="orange1")
HAZARD = Style(color="white", bgcolor="red", bold=True)
SHADE = Style(color="dark_orange3")
AXIS = Style(dim=True)


@dataclass
class GridReady(Message):
    grid: Grid


class CellChanged(Message):
    """The cursor moved to another cell or the window changed: the detail pane follows."""


def glyph(count: int) -> str:
    return " " if count == 0 else "█" if count == 1 else str(count) if count < 10 else "*"


class AddressMapView(Widget, can_focus=True):
    DEFAULT_CSS = """
    AddressMapView { height: 1fr; }
    """
    BINDINGS = [
        Binding("up,k", "move(-1, 0)", "Up", show=False),
        Binding("down,j", "move(1, 0)", "Down", show=False),
        Binding("left,h", "move(0, -1)", "Earlier", show=False),
        Binding("right,l", "move(0, 1)", "Later", show=False),
        Binding("pageup", "page(-1)", "Lower addresses", show=False),
        Binding("pagedown", "page(1)", "Higher addresses", show=False),
        Binding("z", "zoom(1)", "Zoom in"),
        Binding("x", "zoom(-1)", "Zoom out"),
        Binding("Z", "zoom_time(1)", "Zoom in on time", show=False),
        Binding("X", "zoom_time(-1)", "Zoom out on time", show=False),
        Binding("0", "fit", "Whole map", show=False),
    ]

    row: reactive[int] = reactive(0, always_update=True)
    col: reactive[int] = reactive(0, always_update=True)

    def __init__(self, handle: SessionHandle, **kwargs) -> None:  # type: ignore[no-untyped-def]
        super().__init__(**kwargs)
        self.handle = handle
        self.view: View | None = None
        self.grid: Grid | None = None
        self.bounds = (0, 1, 1, 1)  # lowest address, highest end, first seq, last seq
        self.owned: list[Span] = []  # trace-owned ranges, once the buffer list is loaded
        self.hazards: list[Span] = []
        self._shade: list[list[bool]] = []
        self._red: list[list[bool]] = []
        self.generation = 0

    @property
    def label_width(self) -> int:
        return len(f"0x{self.bounds[1]:x}") + 1

    @property
    def settled(self) -> bool:
        return self.view is not None and self.grid is not None and self.grid.view == self.view

    def show(self, device: int, buffer_type: str, bounds: tuple[int, int, int, int]) -> None:
        """Show one map whole: its addresses from the lowest to the highest, every seq."""
        self.bounds = bounds
        self.owned, self.hazards = [], []
        lo, hi, first, last = bounds
        self.view = View(device, buffer_type, lo, max(hi, lo + 1), first, max(last, first), 1, 1)
        self.grid = None
        self.row = self.col = 0
        self._fit_to_size()

    def marks(self, owned: list[Span], hazards: list[Span]) -> None:
        """Trace-owned ranges and hazards, from the buffer list's layout."""
        self.owned, self.hazards = owned, hazards
        self._marks()
        self.refresh()

    def _marks(self) -> None:
        if self.view is not None:
            self._shade = cells_of(self.view, self.owned) if self.owned else []
            self._red = cells_of(self.view, self.hazards) if self.hazards else []

    def _fit_to_size(self) -> None:
        if self.view is None or not self.size.height:
            return
        rows, cols = self.size.height - 1, self.size.width - self.label_width
        if (rows, cols) != (self.view.rows, self.view.cols):
            self._set_view(self.view.sized(rows, cols))

    def on_resize(self) -> None:
        self._fit_to_size()

    def _set_view(self, view: View) -> None:
        self.view = view
        self.row = min(self.row, view.rows - 1)
        self.col = min(self.col, view.used_cols - 1)
        self._marks()
        self.generation += 1
        self._fetch(self.generation, view)
        self.refresh()

    @work(thread=True, exclusive=True, group="grid")
    def _fetch(self, generation: int, view: View) -> None:
        last = self.bounds[3]
        try:
            spans = self.handle.run(lambda s: buffer_cells(
                s, view.device, view.buffer_type, view.addr_base, view.addr_step, view.rows,
                view.seq_lo, view.seq_step, view.cols, last))  # fmt: skip
        except SessionError:
            spans = []
        if generation == self.generation:
            self.post_message(GridReady(build_grid(view, spans)))

    def on_grid_ready(self, message: GridReady) -> None:
        message.stop()
        if message.grid.view == self.view:
            self.grid = message.grid
            self.refresh()
            self.post_message(CellChanged())

    # -- rendering -------------------------------------------------------------------------

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        view, grid = self.view, self.grid
        if view is None:
            return Strip.blank(width)
        label = self.label_width
        if y == 0:
            return self._axis(width, label)
        r = y - 1
        if r >= view.rows:
            return Strip.blank(width)
        address = view.row_range(r)[0]
        segments = [Segment(f"0x{address:x}".rjust(label - 1) + " ",
                            Style(reverse=True) if r == self.row else AXIS)]  # fmt: skip
        shade = self._shade[r] if self._shade else None
        red = self._red[r] if self._red else None
        used = view.used_cols
        wide = max(1, (width - label) // max(1, used))  # cells per column when seqs are few
        for c in range(used):
            count, captured = grid.cell(r, c) if grid is not None and grid.view == view else (0, 0)
            if count:
                style = HAZARD if red and red[c] else CAPTURED if captured else BAR
                ch = glyph(count)
            elif shade and shade[c]:
                style, ch = SHADE, "░"
            else:
                style, ch = Style(), "·" if r == self.row or c == self.col else " "
                style = AXIS
            if r == self.row and c == self.col:
                style = style + Style(reverse=True)
                ch = ch if ch.strip() else "+"
            segments.append(Segment(ch * wide, style))
        return Strip(segments).simplify().crop(0, width).extend_cell_length(width)

    def _axis(self, width: int, label: int) -> Strip:
        view = self.view
        assert view is not None
        left, right = f"seq {view.seq_lo:,}", f"{view.seq_hi:,}"
        used = view.used_cols
        bar = used * max(1, (width - label) // max(1, used))
        text = left + right.rjust(max(0, bar - len(left))) if bar >= len(left) + len(right) + 1 else left
        return Strip([Segment("address".ljust(label), AXIS), Segment(text, AXIS)]).crop(0, width).extend_cell_length(width)

    # -- cursor, zoom, pan -----------------------------------------------------------------

    def watch_row(self) -> None:
        self.refresh()
        self.post_message(CellChanged())

    def watch_col(self) -> None:
        self.refresh()
        self.post_message(CellChanged())

    def action_move(self, rows: int, cols: int) -> None:
        view = self.view
        if view is None:
            return
        lo, hi, first, last = self.bounds
        row, col = self.row + rows, self.col + cols
        if not 0 <= row < view.rows:
            moved = view.pan_addresses(rows, lo, hi)
            if moved != view:
                self._set_view(moved)
            row = max(0, min(view.rows - 1, row))
        if not 0 <= col < view.used_cols:
            moved = view.pan_seqs(cols, first, last)
            if moved != view:
                self._set_view(moved)
            col = max(0, min(view.used_cols - 1, col))
        self.row, self.col = row, col

    def action_page(self, direction: int) -> None:
        if self.view is not None:
            self._set_view(self.view.pan_addresses(direction * self.view.rows, *self.bounds[:2]))

    def action_zoom(self, direction: int) -> None:
        if self.view is not None:
            factor = 1 / ZOOM if direction > 0 else ZOOM
            self._set_view(self.view.zoom_addresses(factor, self.row, *self.bounds[:2]))

    def action_zoom_time(self, direction: int) -> None:
        if self.view is not None:
            factor = 1 / ZOOM if direction > 0 else ZOOM
            self._set_view(self.view.zoom_seqs(factor, self.col, *self.bounds[2:]))

    def action_fit(self) -> None:
        if self.view is not None:
            lo, hi, first, last = self.bounds
            self._set_view(View(self.view.device, self.view.buffer_type, lo, hi, first, last,
                                self.view.rows, self.view.cols))  # fmt: skip

    def cell_window(self) -> tuple[int, int, int, int] | None:
        """The cursor cell's addresses [lo, hi) and seqs [first, last]."""
        if self.view is None:
            return None
        return (*self.view.row_range(self.row), *self.view.col_range(self.col))
