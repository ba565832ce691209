"""Device memory per device and buffer type: who held which addresses when, and what traces own."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Header, Static, Tab, Tabs

from ttrecord.errors import SessionError
from ttrecord.store.reader import EventFilter, Session, TimelineRow
from ttrecord.tui.handle import handle_of
from ttrecord.tui.format import addr_range, hexaddr, site, size_text
from ttrecord.tui.memlayout import MapBar, MemoryMap, RangeGroup, load_maps
from ttrecord.tui.messages import BufferUsers, Loaded, RowHighlighted
from ttrecord.tui.widgets.memory_map import LABEL, MemoryMapView
from ttrecord.tui.widgets.tables import fill_table


def buffer_users(session: Session, buffer_id: int) -> list[tuple[TimelineRow, str]]:
    """The calls that read or wrote a buffer, with how ("reads", "writes", or both)."""
    roles: dict[int, set[str]] = {}
    for seq, role in session.buffer_users(buffer_id):
        roles.setdefault(seq, set()).add("reads" if role == "in" else "writes")
    if not roles:
        return []
    rows = session.timeline(EventFilter(seqs=frozenset(roles)), limit=len(roles))
    return [(row, ", ".join(sorted(roles[row.seq]))) for row in rows]


class MemoryScreen(Screen):
    DEFAULT_CSS = """
    MemoryScreen #axis { padding: 0 0 0 0; color: $text-muted; }
    MemoryScreen #map-pane { width: 1fr; }
    MemoryScreen #detail-pane { width: 45%; max-width: 56; border-left: solid $primary; padding: 0 1; }
    MemoryScreen #detail { height: auto; }
    MemoryScreen #users { height: 1fr; }
    MemoryScreen #legend { color: $text-muted; padding: 0 1; }
    """
    BINDINGS = [
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
        self.users: list = []
        self.settled = False  # everything it shows is in (tests and benchmarks wait on it)

    def compose(self) -> ComposeResult:
        yield Header()
        yield Tabs(id="maps")
        with Horizontal():
            with Vertical(id="map-pane"):
                yield Static("", id="axis")
                yield MemoryMapView(id="map")
            with Vertical(id="detail-pane"):
                yield Static("Loading…", id="detail")
                yield Static("Calls that touched it", classes="label")
                yield DataTable(id="users", cursor_type="row")
        yield Static("█ buffer  █ allocated in capture  ▒/░ trace-owned range (capture → release)"
                     "  ! allocated over trace memory", id="legend")  # fmt: skip
        yield Footer()

    def on_mount(self) -> None:
        self.title = self.path.name
        self.sub_title = "memory map"
        self.query_one(MemoryMapView).focus()
        self._load()

    @work(thread=True, exclusive=True)
    def _load(self) -> None:
        try:
            # Its own connection: on a big session this takes seconds, and the shared handle
            # should stay free for the timeline meanwhile.
            with Session.open(self.path) as session:
                self.post_message(Loaded(load_maps(session)))
        except SessionError as exc:
            self.post_message(Loaded(None, str(exc)))
        except Exception as exc:  # a damaged file must not take the viewer down
            self.post_message(Loaded(None, f"{self.path}: cannot be read ({exc})"))

    def on_loaded(self, message: Loaded) -> None:
        detail = self.query_one("#detail", Static)
        if message.error:
            self.settled = True
            detail.update(Text(message.error, "red"))
            return
        self.maps = message.data
        if not self.maps:
            self.settled = True
            detail.update("No device buffers were recorded in this session.")
            return
        tabs = self.query_one(Tabs)
        for i, m in enumerate(self.maps):
            tabs.add_tab(Tab(m.title + (f" ({m.hazard_count}!)" if m.hazard_count else ""), id=f"map-{i}"))
        start = self._initial_map()
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
        m = self.maps[index]
        focus = self._focus_bar(m)
        view = self.query_one(MemoryMapView)
        view.show(m, focus.buffer.id if focus else None)
        self._axis()

    def _axis(self) -> None:
        """The time axis over the bars, fitted to the width the map has now."""
        view = self.query_one(MemoryMapView)
        if view.map is None:
            return
        width = view.size.width - LABEL
        last = f"seq {view.map.last_seq}"
        axis = f"seq 1{last.rjust(width - 5)}" if width >= len(last) + 7 else f"seq 1–{view.map.last_seq}"
        self.query_one("#axis", Static).update(f"{'address (bank-local)':<{LABEL}}{axis}")

    def on_resize(self) -> None:
        self.call_after_refresh(self._axis)

    def on_tabs_tab_activated(self, event: Tabs.TabActivated) -> None:
        if event.tab is not None and self.maps:
            index = int((event.tab.id or "").split("-")[1])
            if self.query_one(MemoryMapView).map is not self.maps[index]:
                self._show(index)

    def action_cycle(self, step: int) -> None:
        self.query_one(Tabs).action_next_tab() if step > 0 else self.query_one(Tabs).action_previous_tab()

    def on_row_highlighted(self, message: RowHighlighted) -> None:
        item = self.query_one(MemoryMapView).selected
        detail = self.query_one("#detail", Static)
        self.users = []
        self.settled = False
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
        self.settled = message.buffer_id == self._selected_buffer()
        fill_table(self.query_one("#users", DataTable), ("seq", "phase", "op", "role", "call site"),
                   [[r.seq, r.phase, r.name, role, site(r.file, r.line)] for r, role in message.rows])  # fmt: skip

    def _selected_buffer(self) -> int | None:
        item = self.query_one(MemoryMapView).selected
        if isinstance(item, RangeGroup):
            return item.ranges[-1].buffer_id
        return item.buffer.id if isinstance(item, MapBar) else None

    def action_op(self) -> None:
        if self.users:
            row = self.query_one("#users", DataTable).cursor_row
            from ttrecord.tui.screens.op_detail import OpDetailScreen

            self.app.push_screen(OpDetailScreen(self.path, self.users[min(row, len(self.users) - 1)][0].seq))

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.action_op()
