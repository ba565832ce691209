"""A timeline of any length: a ScrollView that pages rows from SQLite into an LRU cache.

Only the visible page and its neighbours are ever in memory. A page is fetched with a keyset
query (`seq > last seq of the page before`) when that page is cached, which is what scrolling
does, and with LIMIT/OFFSET only for a jump. Fetches run in thread workers; until a page
arrives its lines render as placeholders, so the UI never waits on SQLite.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from rich.segment import Segment
from rich.style import Style
from textual import events, work
from textual.binding import Binding
from textual.geometry import Region, Size
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from ttrecord.errors import SessionError
from ttrecord.events import kind_label
from ttrecord.store.reader import EventFilter, TimelineRow
from ttrecord.tui.columns import MIDDLE, NEVER, Column, fit, shorten
from ttrecord.tui.format import PHASE_COLOR, duration, hexaddr, site
from ttrecord.tui.handle import SessionHandle
from ttrecord.tui.messages import EventChosen, PageLoaded, RowCount
from ttrecord.tui.queue_lanes import QueueLanes

PAGE = 100
MAX_PAGES = 40

# The timeline's columns with the width their content usually wants; `columns_for` fits them
# to the terminal. Sequence numbers and phases never shrink; the addresses, duration, device
# and trace give way whole, then the op name, then the kind; call sites shrink from the middle.
COLUMNS = (
    (Column("seq", 9, shorten=NEVER), 7), (Column("phase", 8, shorten=NEVER), 7),
    (Column("kind", 5, min=6), 13), (Column("op", 3, min=10), 24),
    (Column("dev", 2, shorten=NEVER, optional=True), 3),
    (Column("tr", 2, shorten=NEVER, optional=True), 3),
    (Column("call site", 6, min=14, shorten=MIDDLE), 26),
    (Column("dur", 1, shorten=NEVER, optional=True), 8),
    (Column("addresses", 0, shorten=NEVER, optional=True), 24),
)
MARKER = 1  # the phase band at the left of every row


def columns_for(width: int, last_seq: int = 0) -> list[tuple[Column, int]]:
    """The columns shown at `width` cells and their widths; the addresses take what is left."""
    cols = [c for c, _ in COLUMNS]
    naturals = [n for _, n in COLUMNS]
    naturals[0] = max(3, len(str(last_seq)))
    widths = fit(cols, naturals, width - MARKER, gap=1)
    spare = width - MARKER - sum(w + 1 for w in widths if w)
    if widths[-1] and spare > 0:
        widths[-1] += spare
    return [(c, w) for c, w in zip(cols, widths, strict=True) if w]


def header_text(columns: list[tuple[Column, int]], lanes: QueueLanes | None = None) -> str:
    """Column titles; with `lanes`, the queue lanes come before the addresses."""
    titles = [shorten(c.title, w).ljust(w + 1) for c, w in columns]
    if lanes is not None:
        at = next((i for i, (c, _) in enumerate(columns) if c.title == "addresses"), len(titles))
        titles.insert(at, lanes.header().ljust(lanes.width + 1))
    return "".join(titles).rstrip()


def row_cells(row: TimelineRow) -> list[str]:
    if row.address is not None:
        addrs = hexaddr(row.address)
    else:
        addrs = " ".join(f"{'→' if role == 'out' else ''}{hexaddr(a)}" for role, a in row.tensors)
    return [
        str(row.seq), row.phase, kind_label(row.kind), row.name,
        "" if row.device is None else str(row.device),
        "" if row.trace is None else str(row.trace),
        site(row.file, row.line), duration(row.dur_ns), addrs,
    ]  # fmt: skip


class EventTable(ScrollView, can_focus=True):
    """Rows of a filtered event stream; `cursor` is the selected row's index."""

    DEFAULT_CSS = """
    EventTable { height: 1fr; }
    """
    BINDINGS = [
        Binding("up,k", "move(-1)", "Up", show=False),
        Binding("down,j", "move(1)", "Down", show=False),
        Binding("pageup", "page(-1)", "Page up", show=False),
        Binding("pagedown", "page(1)", "Page down", show=False),
        Binding("home", "jump_start", "First", show=False),
        Binding("end", "jump_end", "Last", show=False),
        Binding("enter", "choose", "Op detail"),
    ]

    cursor: reactive[int] = reactive(0, always_update=True)

    def __init__(self, handle: SessionHandle, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.handle = handle
        self.lanes: QueueLanes | None = None  # command-queue lanes (a multi-queue run)
        self.filter = EventFilter()
        self.total = 0
        self.generation = 0
        self._pages: OrderedDict[int, list[TimelineRow]] = OrderedDict()
        self._pending: set[int] = set()
        # When the view is every event and seqs have no gaps, row i is seq first + i, so any
        # page is a keyset query, even a jump to the end.
        self._first_seq: int | None = None
        self._counted = -1  # the generation whose count arrived
        self.last_seq = 0  # the largest seq shown so far: the seq column fits it
        self._layout: tuple[tuple[int, int], list[tuple[Column, int]]] = ((-1, -1), [])

    # -- data ------------------------------------------------------------------------------

    def load(self, filt: EventFilter, jump_seq: int | None = None) -> None:
        """Show a new filter; optionally put the cursor on an event once it is counted."""
        self.generation += 1
        self.filter = filt
        self._pages.clear()
        self._pending.clear()
        self._first_seq = None
        self._count(self.generation, filt, jump_seq)

    @work(thread=True, group="count", exclusive=True)
    def _count(self, generation: int, filt: EventFilter, jump_seq: int | None) -> None:
        try:
            self._count_rows(generation, filt, jump_seq)
        except SessionError as exc:
            self.post_message(RowCount(generation, 0, error=str(exc)))

    def _count_rows(self, generation: int, filt: EventFilter, jump_seq: int | None) -> None:
        total = self.handle.run(lambda s: s.event_count(filt))
        first = None
        seqs = self.handle.run(lambda s: s.seq_range())
        if filt == EventFilter() and seqs is not None and seqs[1] - seqs[0] + 1 == total:
            first = seqs[0]
        index = None
        if jump_seq is not None and first is not None:
            index = jump_seq - first
        elif jump_seq is not None:
            index = self.handle.run(lambda s: s.event_index(jump_seq, filt))
        self.post_message(RowCount(generation, total, index, first, last_seq=seqs[1] if seqs else None))

    def on_row_count(self, message: RowCount) -> None:
        if message.generation != self.generation:
            return
        self.total = message.total
        self._counted = message.generation
        if message.error:
            self._pending.clear()
        self._first_seq = message.first_seq
        self.last_seq = max(self.last_seq, message.last_seq or 0)
        self.virtual_size = Size(self.size.width, self.total)
        index = message.index if message.index is not None else 0
        self.cursor = min(index, max(0, self.total - 1))
        # The new virtual size takes effect at the next layout; scroll after it.
        self.call_after_refresh(self._reveal_cursor)
        self._prefetch(self.cursor)
        self.refresh()

    def grow(self, total: int) -> None:
        """More rows arrived at the end (a running session): keep the cached pages, refetch
        the last, partial one, and follow the end if the cursor was on the last row."""
        if total <= self.total or self._counted != self.generation:
            return
        following = self.cursor >= self.total - 1
        self._pages.pop(max(0, self.total - 1) // PAGE, None)
        self.total = total
        self.virtual_size = Size(self.size.width, total)
        if following:
            self.cursor = total - 1
            self.call_after_refresh(self._reveal_cursor)
        self._prefetch(self.cursor)
        self.refresh()

    def _reveal_cursor(self, attempts: int = 10) -> None:
        if not self.allow_vertical_scroll and self.total > self.size.height and attempts:
            self.call_after_refresh(self._reveal_cursor, attempts - 1)  # layout not applied yet
            return
        if not self.scroll_offset.y <= self.cursor < self.scroll_offset.y + self.size.height:
            self.scroll_to(y=max(0, self.cursor - self.size.height // 3), animate=False, immediate=True)
        self.refresh()

    def _prefetch(self, index: int) -> None:
        """Ask for the pages around a row now, rather than when a render finds them missing."""
        height = max(self.size.height, 1)
        for row in (index - height, index, index + height):
            self._request(max(0, row) // PAGE)

    def _request(self, page: int) -> None:
        if page < 0 or page * PAGE >= self.total or page in self._pages or page in self._pending:
            return
        self._pending.add(page)
        before = self._pages.get(page - 1)
        after_seq = before[-1].seq if before and len(before) == PAGE else None
        if after_seq is None and self._first_seq is not None:
            after_seq = self._first_seq + page * PAGE - 1
        offset = 0 if after_seq is not None else page * PAGE
        self._fetch(self.generation, page, self.filter, after_seq, offset)

    @work(thread=True, group="pages")
    def _fetch(self, generation: int, page: int, filt: EventFilter, after_seq: int | None,
               offset: int) -> None:  # fmt: skip
        try:
            rows = self.handle.run(lambda s: s.timeline(filt, PAGE, after_seq, offset))
        except SessionError as exc:
            self.post_message(RowCount(generation, 0, error=str(exc)))
            return
        self.post_message(PageLoaded(generation, page, rows))

    def on_page_loaded(self, message: PageLoaded) -> None:
        message.stop()
        if message.generation != self.generation:
            return
        self._pending.discard(message.page)
        self._pages[message.page] = message.rows
        if message.rows:
            self.last_seq = max(self.last_seq, message.rows[-1].seq)
        while len(self._pages) > MAX_PAGES:
            self._pages.popitem(last=False)
        self.refresh()

    def row(self, index: int) -> TimelineRow | None:
        rows = self._pages.get(index // PAGE)
        if rows is None:
            return None
        self._pages.move_to_end(index // PAGE)
        offset = index % PAGE
        return rows[offset] if offset < len(rows) else None

    @property
    def fetching(self) -> bool:
        """Pages are on their way (not `loading`: that name is Widget's and disables it)."""
        return bool(self._pending)

    @property
    def settled(self) -> bool:
        """The count for the current filter is in and so is every visible row."""
        if self._counted != self.generation or self._pending:
            return False
        top = self.scroll_offset.y
        return all(self.row(i) is not None for i in range(top, min(self.total, top + self.size.height)))

    # -- rendering -------------------------------------------------------------------------

    def render_line(self, y: int) -> Strip:
        index = self.scroll_offset.y + y
        width = self.size.width
        if index >= self.total:
            return Strip.blank(width)
        row = self.row(index)
        page = index // PAGE
        if row is None:
            self._request(page)
            return Strip([Segment("  …".ljust(width), Style(dim=True))], width)
        if y == 0:
            self._request(page - 1)
        if y == self.size.height - 1:
            self._request(page + 1)
        return self._strip(row, index == self.cursor, width)

    def columns(self, width: int | None = None) -> list[tuple[Column, int]]:
        """The columns at this width (the screen's header shows the same)."""
        width = self.size.width if width is None else width
        key = (width, self.last_seq)
        if self._layout[0] != key:
            self._layout = (key, columns_for(width, self.last_seq))
        return self._layout[1]

    def _strip(self, row: TimelineRow, selected: bool, width: int) -> Strip:
        cells = dict(zip((c.title for c, _ in COLUMNS), row_cells(row), strict=True))
        phase_style = Style(color=PHASE_COLOR.get(row.phase, "white"))
        name_style = Style(color="red", bold=True) if row.status != "ok" else Style()
        segments = [Segment("▌", phase_style)]
        for column, w in self.columns(width):
            title = column.title
            if title == "addresses" and self.lanes is not None:  # the lanes go before them
                mark = row.seq in self.lanes.marks
                lane_style = Style(color="yellow", bold=True) if mark else Style()
                segments.append(Segment(self.lanes.cell(row).ljust(self.lanes.width + 1), lane_style))
            style = phase_style if title == "phase" else name_style if title == "op" else Style()
            text = shorten(cells[title], w, column.shorten)[:w] if title != "addresses" else cells[title]
            segments.append(Segment(text.ljust(w + 1), style))
        strip = Strip(segments).crop(0, width).extend_cell_length(width)
        if selected:
            strip = strip.apply_style(Style(reverse=True))
        return strip

    # -- cursor ----------------------------------------------------------------------------

    def watch_cursor(self, old: int, new: int) -> None:
        self.scroll_to_region(Region(0, new, 1, 1), animate=False, immediate=True)
        self._prefetch(new)
        self.refresh()

    def action_move(self, delta: int) -> None:
        if self.total:
            self.cursor = max(0, min(self.total - 1, self.cursor + delta))

    def action_page(self, direction: int) -> None:
        self.action_move(direction * max(1, self.size.height - 1))

    def action_jump_start(self) -> None:
        self.action_move(-self.total)

    def action_jump_end(self) -> None:
        self.action_move(self.total)

    def action_choose(self) -> None:
        row = self.row(self.cursor)
        if row is not None:
            self.post_message(EventChosen(row.seq))

    def on_click(self, event: events.Click) -> None:
        index = self.scroll_offset.y + event.y
        if 0 <= index < self.total:
            if index == self.cursor and event.chain > 1:
                self.action_choose()
            self.cursor = index
