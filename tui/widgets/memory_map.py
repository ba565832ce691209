"""The memory map: one line per buffer on an address axis, its lifetime drawn over seq time.

Lines are sorted by address, so buffers that reuse an address sit next to each other and the
order of their bars tells who had it when. Ranges a trace owns come first, shaded from capture
to release; a buffer allocated over one of them while the trace lived is drawn in red.
"""

from __future__ import annotations

from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding
from textual.geometry import Region, Size
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from ttrecord.tui.format import addr_range
from ttrecord.tui.memlayout import MapBar, MemoryMap, RangeGroup, TraceRange
from ttrecord.tui.messages import RowHighlighted

LABEL = 34
BAR = Style(color="dodger_blue1")
CAPTURED = Style(color="orange1")
HAZARD = Style(color="red", bold=True)
SHADE = Style(color="dark_orange3")
AXIS = Style(dim=True)


class MemoryMapView(ScrollView, can_focus=True):
    DEFAULT_CSS = """
    MemoryMapView { height: 1fr; }
    """
    BINDINGS = [
        Binding("up,k", "move(-1)", "Up", show=False),
        Binding("down,j", "move(1)", "Down", show=False),
        Binding("pageup", "move(-20)", "Page up", show=False),
        Binding("pagedown", "move(20)", "Page down", show=False),
        Binding("n", "next_hazard", "Next overlap"),
    ]

    cursor: reactive[int] = reactive(0, always_update=True)

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.map: MemoryMap | None = None
        self._shade: dict[int, list[TraceRange]] = {}

    def show(self, memory_map: MemoryMap, select_buffer: int | None = None) -> None:
        self.map = memory_map
        self._shade.clear()
        self.virtual_size = Size(1, len(self.lines))
        target = 0
        for i, line in enumerate(self.lines):
            if isinstance(line, MapBar) and (
                line.buffer.id == select_buffer or (select_buffer is None and line.hazards)
            ):
                target = i
                break
        self.cursor = target
        self.call_after_refresh(self._reveal_cursor)

    def _reveal_cursor(self, attempts: int = 10) -> None:
        if not self.allow_vertical_scroll and len(self.lines) > self.size.height and attempts:
            self.call_after_refresh(self._reveal_cursor, attempts - 1)  # layout not applied yet
            return
        self.scroll_to_region(Region(0, self.cursor, 1, 1), animate=False, immediate=True)

    @property
    def lines(self) -> list[RangeGroup | MapBar]:
        if self.map is None:
            return []
        return [*self.map.groups, *self.map.bars]

    @property
    def selected(self) -> RangeGroup | MapBar | None:
        lines = self.lines
        return lines[self.cursor] if 0 <= self.cursor < len(lines) else None

    # -- rendering -------------------------------------------------------------------------

    def _col(self, seq: int, width: int) -> int:
        last = max(1, self.map.last_seq if self.map else 1)
        return min(width - 1, max(0, (seq - 1) * width // last))

    def _span(self, start: int, stop: int, width: int) -> tuple[int, int]:
        return self._col(start, width), self._col(stop, width)

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        index = self.scroll_offset.y + y
        lines = self.lines
        if index >= len(lines) or self.map is None:
            return Strip.blank(width)
        item = lines[index]
        bar_width = max(4, width - LABEL)
        cells = [(" ", Style())] * bar_width
        if isinstance(item, RangeGroup):
            traces = item.traces
            who = f"T{traces[0]}" if len(traces) == 1 else f"T×{len(traces)}"
            rw = "".join(r[0] for r in item.roles.split("/"))
            label = f"{who} {rw} {addr_range(item.address, item.end - item.address)}"
            for rng in item.ranges:
                a, b = self._span(rng.trace.begin_seq, rng.live_until or self.map.last_seq, bar_width)
                for c in range(a, b + 1):
                    cells[c] = ("▒", SHADE)
            marker = "▒ "
        else:
            label = addr_range(item.address, item.end - item.address)
            for rng in self._shading(item):
                a, b = self._span(rng.trace.end_seq or rng.trace.begin_seq,
                                  rng.live_until or self.map.last_seq, bar_width)  # fmt: skip
                for c in range(a, b + 1):
                    cells[c] = ("░", SHADE)
            style = HAZARD if item.hazards else CAPTURED if item.buffer.alloc_phase == "capture" else BAR
            a, b = self._span(item.start, item.stop, bar_width)
            for c in range(a, b + 1):
                cells[c] = ("█", style)
            marker = "! " if item.hazards else "  "
        label_style = HAZARD if marker == "! " else Style()
        segments = [Segment(marker, label_style), Segment(label[: LABEL - 3].ljust(LABEL - 2), label_style)]
        segments += [Segment(ch, st) for ch, st in cells]
        strip = Strip(segments).simplify().crop(0, width).extend_cell_length(width)
        return _highlight(strip) if index == self.cursor else strip

    def _shading(self, bar: MapBar) -> list[TraceRange]:
        """Trace ranges this buffer's addresses fall in: shaded while the trace owns them."""
        cached = self._shade.get(bar.buffer.id)
        if cached is None and self.map is not None:
            groups = self.map.groups_over(bar.address, bar.end)
            cached = self._shade[bar.buffer.id] = [r for g in groups for r in g.ranges]
        return cached or []

    # -- cursor ----------------------------------------------------------------------------

    def watch_cursor(self, old: int, new: int) -> None:
        self.refresh()
        self.scroll_to_region(Region(0, new, 1, 1), animate=False, immediate=True)
        self.post_message(RowHighlighted(new))

    def action_move(self, delta: int) -> None:
        n = len(self.lines)
        if n:
            self.cursor = max(0, min(n - 1, self.cursor + delta))

    def action_next_hazard(self) -> None:
        lines = self.lines
        for step in range(1, len(lines) + 1):
            i = (self.cursor + step) % len(lines)
            if isinstance(lines[i], MapBar) and lines[i].hazards:
                self.cursor = i
                return

    def on_click(self, event: events.Click) -> None:
        index = self.scroll_offset.y + event.y
        if 0 <= index < len(self.lines):
            self.cursor = index


def _highlight(strip: Strip) -> Strip:
    """Reverse the label only, so the bar keeps its colours on the selected line."""
    label = strip.crop(0, LABEL).apply_style(Style(reverse=True))
    return Strip.join([label, strip.crop(LABEL, strip.cell_length)])
