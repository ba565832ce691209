"""Device memory per device and buffer type: who held which addresses when, and what traces own."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.screen import Screen
from textual.widgets import DataTable, Header, Static, Tab, Tabs

from ttrecord.errors import SessionError
from ttrecord.meshes import device_label, meshes_of
from ttrecord.store.reader import EventFilter, Session, TimelineRow, buffers_in_window, map_extents
from ttrecord.tui.handle import handle_of
from ttrecord.tui.format import addr_range, hexaddr, site, size_text
from ttrecord.tui.columns import MIDDLE, NEVER, Column
from ttrecord.tui.memlayout import MapBar, MemoryMap, RangeGroup, hazard_spans, load_maps, owned_spans
from ttrecord.tui.messages import BufferUsers, Loaded, RowHighlighted
from ttrecord.tui.widgets.address_map import AddressMapView, CellChanged
from ttrecord.tui.widgets.memory_map import LABEL, MemoryMapView
from ttrecord.tui.widgets.tables import FitTable, fill_table
from ttrecord.tui.widgets.footer import KeyFooter
from ttrecord.textsafe import clean


CELL_COLUMNS = (Column("range", 3, shorten=NEVER), Column("alloc", 2, shorten=NEVER),
                Column("freed", 2, shorten=NEVER), Column("phase", 1, optional=True))


USER_COLUMNS = (Column("seq", 9, shorten=NEVER), Column("phase", 4, shorten=NEVER, optional=True),
                Column("op", 2, min=6), Column("role", 3, min=5),
                Column("call site", 5, min=12, shorten=MIDDLE))


def buffer_users(session: Session, buffer_id: int) -> list[tuple[TimelineRow, str]]:
    """The calls that read or wrote a buffer, with how ("reads", "writes", or both)."""
    roles: dict[int, set[str]] = {}
    for seq, role in session.buffer_users(buffer_id):
        roles.setdefault(seq, set()).add("reads" if role == "in" else "writes")
    if not roles:
        return []
    rows = session.timeline(EventFilter(seqs=frozenset(roles)), limit=len(roles))
    return [(row, ", ".join(sorted(roles[row.seq]))) for row in rows]


@dataclass
class Extents(Message):
    """Each map's (device, buffer type, buffers, lowest address, highest end), and the last seq."""

    maps: list[tuple[int, str, int, int, int]]
    last_seq: int
    error: str | None = None
    labels: dict[int, str] = field(default_factory=dict)  # device -> its chips (ttrecord.meshes)


@dataclass
class CellBuffers(Message):
    """The first buffers of the scaled map's cursor cell."""

    window: tuple[int, int, int, int]
    rows: list[tuple[int, int, int, int, int | None, str | None]]


SCALE, BUFFERS = "scale", "buffers"
NARROW = 100  # below this many columns the detail pane goes under the map
LEGEND = {
    SCALE: "█ a buffer  2-9 * buffers sharing a cell  orange: allocated in capture  red: over"
           " trace memory  ░ trace-owned",
    BUFFERS: "█ buffer  █ allocated in capture  ▒/░ trace-owned range (capture → release)"
             "  ! allocated over trace memory",
}  # fmt: skip


class MemoryScreen(Screen):
    DEFAULT_CSS = """
    MemoryScreen #axis { padding: 0 0 0 0; color: $text-muted; }
    MemoryScreen #map-pane { width: 1fr; }
    MemoryScreen #detail-pane { width: 45%; max-width: 56; border-left: solid $primary; padding: 0 1; }
    MemoryScreen #body.-narrow { layout: vertical; }
    MemoryScreen #body.-narrow #detail-pane {
        width: 100%; max-width: 100%; height: 9; border-left: none; border-top: solid $primary;
    }
    MemoryScreen #detail { height: auto; }
    MemoryScreen #users { height: 1fr; }
    MemoryScreen #legend { color: $text-muted; padding: 0 1; }
    """
    HELP_TITLE = "Memory map"
    HELP_WIDGETS = (AddressMapView, MemoryMapView)
    BINDINGS = [
        Binding("v", "toggle_view", "Scale/buffers"),
        Binding("left_square_bracket", "cycle(-1)", "Prev map"),
        Binding("right_square_bracket", "cycle(1)", "Next map"),
        Binding("o", "op", "Op detail"),
        Binding("escape", "app.pop_screen", "Back"),
    ]

    def __init__(self, path: Path, focus_seqs: Sequence[int] = (), device: int | None = None) -> None:
        super().__init__()
        self.path = Path(path)
        self.focus_seqs = set(focus_seqs)
        self.device = device
        self.maps: list[MemoryMap] = []
        self.extents: list[tuple[int, str, int, int, int]] = []
        self.last_seq = 0
        self.index = 0  # the map shown
        self.users: list = []
        self.cell_rows: list = []
        # From a finding, the list of buffers on the one it is about; else the scaled map.
        self.mode = BUFFERS if self.focus_seqs else SCALE
        self._maps_loaded = False
        self._load_started = False
        self._list_settled = False
        self._cell_settled = False

    @property
    def settled(self) -> bool:
        """Everything it shows is in (tests and benchmarks wait on it)."""
        if not self._maps_loaded:
            return False
        if self.mode == SCALE and self.extents:
            return self.query_one(AddressMapView).settled and self._cell_settled
        return self._list_settled

    def compose(self) -> ComposeResult:
        yield Header()
        yield Tabs(id="maps")
        with Horizontal(id="body"):
            with Vertical(id="map-pane"):
                yield Static("", id="axis")
                yield MemoryMapView(id="map")
                yield AddressMapView(handle_of(self.app, self.path), id="grid")
            with Vertical(id="detail-pane"):
                yield Static("Loading…", id="detail")
                yield Static("Calls that touched it", id="users-label", classes="label")
                yield FitTable(id="users", cursor_type="row")
        yield Static(LEGEND[self.mode], id="legend")
        yield KeyFooter()

    def on_mount(self) -> None:
        self.title = clean(self.path.name)  # a file name is data: no escape reaches the terminal
        self.sub_title = "memory map"
        self._apply_mode()
        self._extents()
        if self.mode == BUFFERS:
            self._start_load()

    def _start_load(self) -> None:
        """Load the buffer list (and the hazards): at once for the list, after the scaled map
        is drawn for the map (both at once would make the first paint wait on the list)."""
        if not self._load_started:
            self._load_started = True
            self._load()

    def _apply_mode(self) -> None:
        scale = self.mode == SCALE
        self.query_one("#axis").display = not scale
        self.query_one(MemoryMapView).display = not scale
        self.query_one(AddressMapView).display = scale
        self.query_one("#users-label", Static).update("Buffers in this cell" if scale else "Calls that touched it")
        self.query_one("#legend", Static).update(LEGEND[self.mode])
        (self.query_one(AddressMapView) if scale else self.query_one(MemoryMapView)).focus()

    def on_resize(self) -> None:
        self.query_one("#body").set_class(self.size.width < NARROW, "-narrow")
        self.call_after_refresh(self._axis)

    @work(thread=True, exclusive=True, group="extents")
    def _extents(self) -> None:
        try:
            maps, seqs, meshes = handle_of(self.app, self.path).run(
                lambda s: (map_extents(s), s.seq_range(), meshes_of(s.devices())))
            labels = {d: device_label(d, meshes) for d in meshes}
            self.post_message(Extents(maps, seqs[1] if seqs else 0, labels=labels))
        except SessionError as exc:
            self.post_message(Extents([], 0, str(exc)))

    def on_extents(self, message: Extents) -> None:
        if message.error or not message.maps:
            self._start_load()  # it says why (or that there are no buffers)
            return
        self.extents, self.last_seq = message.maps, message.last_seq
        tabs = self.query_one(Tabs)
        if not tabs.tab_count:
            for i, (device, buffer_type, *_rest) in enumerate(self.extents):
                label = message.labels.get(device, f"device {device}")
                tabs.add_tab(Tab(f"{label} · {buffer_type}", id=f"map-{i}"))
        start = next((i for i, e in enumerate(self.extents) if self.device is None or e[0] == self.device), 0)
        if not self.maps:
            tabs.active = f"map-{start}"
            self._show_grid(start)
        else:  # the buffer list came first
            self._show_grid(self.index)

    @work(thread=True, exclusive=True)
    def _load(self) -> None:
        try:
            # Its own connection: on a big session this takes seconds, and the shared handle
            # should stay free for the scaled map meanwhile.
            with Session.open(self.path) as session:
                self.post_message(Loaded(load_maps(session)))
        except SessionError as exc:
            self.post_message(Loaded(None, str(exc)))
        except Exception as exc:  # a damaged file must not take the viewer down
            self.post_message(Loaded(None, f"{self.path}: cannot be read ({exc})"))

    def on_loaded(self, message: Loaded) -> None:
        detail = self.query_one("#detail", Static)
        self._maps_loaded = True
        if message.error:
            self._list_settled = True
            detail.update(Text(message.error, "red"))
            return
        self.maps = message.data
        if not self.maps:
            self._list_settled = True
            detail.update("No device buffers were recorded in this session.")
            return
        tabs = self.query_one(Tabs)
        for i, m in enumerate(self.maps):
            label = m.title + (f" ({m.hazard_count}!)" if m.hazard_count else "")
            if tabs.query(f"#map-{i}"):
                tabs.query_one(f"#map-{i}", Tab).label = label
            else:
                tabs.add_tab(Tab(label, id=f"map-{i}"))
        start = self._initial_map() if self.mode == BUFFERS or not self.extents else self.index
        tabs.active = f"map-{start}"
        self._show(start)

    def _focus_bar(self, m: MemoryMap) -> MapBar | None:
        """The buffer a finding is about: allocated by one of its events, overlaps first."""
        bars = [m.bars[i] for i in m.bars.allocated_at(self.focus_seqs)]
        return next((b for b in bars if b.hazards), bars[0] if bars else None)

    def _initial_map(self) -> int:
        """The map holding the focused buffer, else the first with an overlap."""
        for i, m in enumerate(self.maps):
            if self._focus_bar(m) is not None:
                return i
        for i, m in enumerate(self.maps):
            if (self.device is None or m.device == self.device) and m.hazard_count:
                return i
        return 0

    def _show(self, index: int) -> None:
        """Show map `index` in both views (the list once the maps are loaded)."""
        self.index = index
        if index < len(self.maps):
            m = self.maps[index]
            focus = self._focus_bar(m)
            self.query_one(MemoryMapView).show(m, focus.buffer.id if focus else None)
            self._axis()
        self._show_grid(index)

    def _show_grid(self, index: int) -> None:
        grid = self.query_one(AddressMapView)
        self.index = index
        if index < len(self.extents):
            device, buffer_type, _, lo, hi = self.extents[index]
            if grid.view is None or (grid.view.device, grid.view.buffer_type) != (device, buffer_type):
                grid.show(device, buffer_type, (lo, hi, 1, max(1, self.last_seq)))
        if index < len(self.maps):
            m = self.maps[index]
            grid.marks(owned_spans(m), hazard_spans(m))

    def _axis(self) -> None:
        """The time axis over the bars, fitted to the width the map has now."""
        view = self.query_one(MemoryMapView)
        if view.map is None:
            return
        width = view.size.width - LABEL
        last = f"seq {view.map.last_seq}"
        axis = f"seq 1{last.rjust(width - 5)}" if width >= len(last) + 7 else f"seq 1–{view.map.last_seq}"
        self.query_one("#axis", Static).update(f"{'address (bank-local)':<{LABEL}}{axis}")

    def on_tabs_tab_activated(self, event: Tabs.TabActivated) -> None:
        if event.tab is not None and event.tab.id and (self.maps or self.extents):
            index = int(event.tab.id.split("-")[1])
            if index != self.index or (self.maps and self.query_one(MemoryMapView).map is not self.maps[index]):
                self._show(index)

    def action_cycle(self, step: int) -> None:
        self.query_one(Tabs).action_next_tab() if step > 0 else self.query_one(Tabs).action_previous_tab()

    def on_row_highlighted(self, message: RowHighlighted) -> None:
        if self.mode == SCALE:
            self._list_settled = True  # the list is hidden: its detail waits for `v`
            return
        item = self.query_one(MemoryMapView).selected
        detail = self.query_one("#detail", Static)
        self.users = []
        self._list_settled = False
        if isinstance(item, RangeGroup):
            detail.update(self._group_text(item))
            self._users(item.ranges[-1].buffer_id)
        elif isinstance(item, MapBar):
            detail.update(self._bar_text(item))
            self._users(item.buffer.id)

    def _group_text(self, group: RangeGroup) -> Text:
        text = Text()
        text.append(f"{addr_range(group.address, group.end - group.address)}\n", "bold")
        text.append(f"{group.roles} by {len(group.traces)} trace(s) on replay; shaded from"
                    " capture to release:")  # fmt: skip
        for rng in group.ranges[:6]:
            t = rng.trace
            release = t.release_seq if t.release_seq is not None else "never"
            text.append(f"\ntrace {t.trace_id} {rng.role}: captured #{t.begin_seq}–#{t.end_seq},"
                        f" released {release}")  # fmt: skip
        if len(group.ranges) > 6:
            text.append(f"\n… and {len(group.ranges) - 6} more", "dim")
        return text

    def _bar_text(self, bar: MapBar) -> Text:
        b = bar.buffer
        text = Text()
        text.append(f"{b.buffer.buffer_type} {addr_range(bar.address, b.buffer.size)}\n", "bold")
        text.append(f"size {size_text(b.buffer.size)} per bank")
        if b.buffer.tensor_id is not None:
            text.append(f", tensor {b.buffer.tensor_id}")
        text.append(f"\nallocated at #{b.alloc_seq}" + (f" ({b.alloc_phase})" if b.alloc_phase else ""))
        text.append(f"\nfreed at #{b.free_seq}" if b.free_seq is not None else "\nnever freed")
        for rng in bar.hazards:
            lo, hi = max(bar.address, rng.address), min(bar.end, rng.end)
            effect = "overwrites it" if rng.role == "writes" else "reads it"
            text.append(
                f"\n! trace {rng.trace.trace_id} {rng.role} {addr_range(rng.address, rng.end - rng.address)}"
                f"\n  on [{hexaddr(lo)}, {hexaddr(hi)}): replay {effect}",
                "bold red",
            )
        return text

    @work(thread=True, exclusive=True, group="users")
    def _users(self, buffer_id: int) -> None:
        try:
            rows = handle_of(self.app, self.path).run(lambda s: buffer_users(s, buffer_id))
        except SessionError:
            rows = []
        self.post_message(BufferUsers(buffer_id, rows))

    def on_buffer_users(self, message: BufferUsers) -> None:
        self.users = message.rows
        self._list_settled = message.buffer_id == self._selected_buffer()
        fill_table(self.query_one("#users", DataTable), USER_COLUMNS,
                   [[r.seq, r.phase, r.name, role, site(r.file, r.line)] for r, role in message.rows])  # fmt: skip

    def _selected_buffer(self) -> int | None:
        item = self.query_one(MemoryMapView).selected
        if isinstance(item, RangeGroup):
            return item.ranges[-1].buffer_id
        return item.buffer.id if isinstance(item, MapBar) else None

    def action_op(self) -> None:
        if self.mode == SCALE:
            self._open_cell_buffer()
            return
        if self.users:
            row = self.query_one("#users", DataTable).cursor_row
            from ttrecord.tui.screens.op_detail import OpDetailScreen

            self.app.push_screen(OpDetailScreen(self.path, self.users[min(row, len(self.users) - 1)][0].seq))

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        if self.mode == SCALE:
            self._open_cell_buffer()
        else:
            self.action_op()

    # -- the scaled map ------------------------------------------------------------------

    def action_toggle_view(self) -> None:
        self.mode = BUFFERS if self.mode == SCALE else SCALE
        self._apply_mode()
        if self.mode == SCALE:
            self.on_cell_changed(CellChanged())
        else:
            self.on_row_highlighted(RowHighlighted(self.query_one(MemoryMapView).cursor))

    def on_cell_changed(self, message: CellChanged) -> None:
        grid = self.query_one(AddressMapView)
        if grid.settled:
            self._start_load()
        window = grid.cell_window()
        if window is None or self.mode != SCALE:
            return
        self._cell_settled = False
        lo, hi, first, last = window
        view = grid.view
        assert view is not None
        count, captured = (0, 0)
        if grid.grid is not None and grid.grid.view == view:
            count, captured = grid.grid.cell(grid.row, grid.col)
        text = Text()
        text.append(f"{view.buffer_type} {addr_range(lo, hi - lo)}\n", "bold")
        text.append(f"seq {first:,}–{min(last, self.last_seq):,}\n")
        text.append(f"{count:,} buffer{'s' if count != 1 else ''}")
        if captured:
            text.append(f", {captured:,} allocated in capture", "dark_orange")
        text.append(f"\n1 row: {size_text(view.addr_step)}, 1 column: {view.seq_step:,} seq{'s' if view.seq_step > 1 else ''}", "dim")
        self.query_one("#detail", Static).update(text)
        self._cell_buffers(window)

    @work(thread=True, exclusive=True, group="cell")
    def _cell_buffers(self, window: tuple[int, int, int, int]) -> None:
        grid = self.query_one(AddressMapView)
        view = grid.view
        if view is None:
            return
        lo, hi, first, last = window
        try:
            rows = handle_of(self.app, self.path).run(lambda s: buffers_in_window(
                s, view.device, view.buffer_type, lo, hi, first, last, self.last_seq))  # fmt: skip
        except SessionError:
            rows = []
        self.post_message(CellBuffers(window, rows))

    def on_cell_buffers(self, message: CellBuffers) -> None:
        if self.mode != SCALE or message.window != self.query_one(AddressMapView).cell_window():
            return
        self.cell_rows = message.rows
        fill_table(self.query_one("#users", DataTable), CELL_COLUMNS,
                   [[addr_range(a, size), f"#{alloc}", f"#{free}" if free is not None else "never",
                     phase or ""] for _, a, size, alloc, free, phase in message.rows])  # fmt: skip
        self._cell_settled = True

    def _open_cell_buffer(self) -> None:
        """The buffer under the table's cursor, in the list of buffers."""
        if not self.cell_rows:
            return
        if not self.maps:
            self.notify("The buffer list is still loading.")
            return
        row = self.query_one("#users", DataTable).cursor_row
        buffer_id = self.cell_rows[min(row, len(self.cell_rows) - 1)][0]
        self.mode = BUFFERS
        self._apply_mode()
        self.query_one(MemoryMapView).show(self.maps[self.index], buffer_id)
