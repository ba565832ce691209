"""The memory map: one line per buffer on an address axis, its lifetime drawn over seq time.

Lines are sorted by address, so buffers that reuse an address sit next to each other and the
order of their bars tells who had it when. Ranges a trace owns come first, shaded from capture
to release; a buffer allocated over one of them while the trace lived is drawn in red.
"""

from __future__ import annotations

import bisect
from typing import Any

from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding
from textual.geometry import Region, Size
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from ttrecord.tui.format import addr_range
from ttrecord.tui.memlayout import Lines, MapBar, MemoryMap, RangeGroup
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
        Binding("pageup", "move(-20)", "Lower addresses", show=False),
        Binding("pagedown", "move(20)", "Higher addresses", show=False),
        Binding("n", "next_hazard", "Next overlap"),
    ]

    cursor: reactive[int] = reactive(0, always_update=True)

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.map: MemoryMap | None = None
        # Shading depends only on which range groups a line meets and on the width: buffers
        # reusing an address share it, so it is worked out once per (groups, width).
        self._groups_at: dict[tuple[int, int], tuple[int, ...]] = {}
        self._shades: dict[tuple[tuple[int, ...], int, str], list[tuple[str, Style]]] = {}
        self._seqs: dict[tuple[tuple[int, ...], str, bool], list[tuple[int, int]]] = {}

    def show(self, memory_map: MemoryMap, select_buffer: int | None = None) -> None:
        self.map = memory_map
        self._groups_at.clear()
        self._shades.clear()
        self._seqs.clear()
        lines = memory_map.lines
        self.virtual_size = Size(1, len(lines))
        bars = memory_map.bars
        if select_buffer is None:
            index = bars.hazard_indices[0] if bars.hazard_indices else None
        else:
            index = bars.index_of(select_buffer)
        self.cursor = 0 if index is None else lines.bar_line(index)
        self.call_after_refresh(self._reveal_cursor)

    def _reveal_cursor(self, attempts: int = 10) -> None:
        if not self.allow_vertical_scroll and len(self.lines) > self.size.height and attempts:
            self.call_after_refresh(self._reveal_cursor, attempts - 1)  # layout not applied yet
            return
        self.scroll_to_region(Region(0, self.cursor, 1, 1), animate=False, immediate=True)

    @property
    def lines(self) -> Lines | list[RangeGroup | MapBar]:
        return [] if self.map is None else self.map.lines

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
        if isinstance(item, RangeGroup):
            traces = item.traces
            who = f"T{traces[0]}" if len(traces) == 1 else f"T×{len(traces)}"
            rw = "".join(r[0] for r in item.roles.split("/"))
            label = f"{who} {rw} {addr_range(item.address, item.end - item.address)}"
            cells = list(self._shade((index,), bar_width, "▒"))  # groups come first in lines
            marker = "▒ "
        else:
            label = addr_range(item.address, item.end - item.address)
            cells = list(self._shade(self._groups_over(item), bar_width, "░"))
            style = HAZARD if item.hazards else CAPTURED if item.buffer.alloc_phase == "capture" else BAR
            a, b = self._span(item.start, item.stop, bar_width)
            cells[a : b + 1] = [("█", style)] * (b + 1 - a)
            marker = "! " if item.hazards else "  "
        label_style = HAZARD if marker == "! " else Style()
        segments = [Segment(marker, label_style), Segment(label[: LABEL - 3].ljust(LABEL - 2), label_style)]
        segments += [Segment(ch, st) for ch, st in cells]
        strip = Strip(segments).simplify().crop(0, width).extend_cell_length(width)
        return _highlight(strip) if index == self.cursor else strip

    def _groups_over(self, bar: MapBar) -> tuple[int, ...]:
        """Indices of the range groups this buffer's addresses fall in."""
        key = (bar.address, bar.end)
        found = self._groups_at.get(key)
        if found is None:
            groups = self.map.groups if self.map else ()
            found = self._groups_at[key] = tuple(
                i for i, g in enumerate(groups) if g.address < bar.end and bar.address < g.end
            )
        return found

    def _shade(self, groups: tuple[int, ...], width: int, char: str) -> list[tuple[str, Style]]:
        """The background of a line: blank, shaded where the groups' traces own the range.

        On a group's own line ("▒") from capture begin, on a buffer's line ("░") from capture
        end; to the release either way."""
        key = (groups, width, char)
        cells = self._shades.get(key)
        if cells is None:
            cells = [(" ", Style())] * width
            assert self.map is not None  # drawn only once a map is shown
            # At most one column per seq: spans one seq apart leave no blank cell between.
            for begin, end in self._owned_seqs(groups, char, width <= self.map.last_seq):
                a, b = self._span(begin, end, width)
                cells[a : b + 1] = [(char, SHADE)] * (b + 1 - a)
            self._shades[key] = cells
        return cells

    def _owned_seqs(self, groups: tuple[int, ...], char: str, adjacent: bool) -> list[tuple[int, int]]:
        """The groups' ranges as seq spans, overlapping ones (and with `adjacent`, ones a seq
        apart) merged: the cells they cover are the same, and a decode loop's 1,000 traces
        become a few spans to draw at each width."""
        key = (groups, char, adjacent)
        found = self._seqs.get(key)
        if found is None and self.map is not None:
            last = self.map.last_seq
            spans = sorted(
                (r.trace.begin_seq if char == "▒" else r.trace.end_seq or r.trace.begin_seq,
                 r.live_until or last)
                for i in groups for r in self.map.groups[i].ranges
            )  # fmt: skip
            found = []
            for begin, end in spans:
                last_begin, last_end = found[-1] if found else (1, 0)
                if last_begin <= last_end and begin <= end and begin <= last_end + adjacent:
                    found[-1] = (last_begin, max(last_end, end))
                else:
                    found.append((begin, end))  # begin > end draws at most a cell: kept as is
            self._seqs[key] = found
        return found or []

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
        if self.map is None or not self.map.bars.hazard_indices:
            return
        lines = self.map.lines
        hazards = [lines.bar_line(i) for i in self.map.bars.hazard_indices]
        after = bisect.bisect_right(hazards, self.cursor)
        self.cursor = hazards[after % len(hazards)]

    def on_click(self, event: events.Click) -> None:
        index = self.scroll_offset.y + event.y
        if 0 <= index < len(self.lines):
            self.cursor = index


def _highlight(strip: Strip) -> Strip:
    """Reverse the label only, so the bar keeps its colours on the selected line."""
    label = strip.crop(0, LABEL).apply_style(Style(reverse=True))
    return Strip.join([label, strip.crop(LABEL, strip.cell_length)])
