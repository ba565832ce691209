"""Every event, paged from SQLite, with phase bands and a filter line."""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Footer, Header, Input, Static

from ttrecord.store.reader import EventFilter
from ttrecord.tui.filters import FILTER_HELP, FilterError, parse_filter
from ttrecord.tui.messages import EventChosen, RowCount
from ttrecord.tui.widgets.event_table import EventTable, header_text


class TimelineScreen(Screen):
    DEFAULT_CSS = """
    TimelineScreen #filter { margin: 0 0; }
    TimelineScreen #columns { padding: 0 0 0 1; text-style: bold; background: $boost; }
    TimelineScreen #status { padding: 0 1; color: $text-muted; }
    """
    BINDINGS = [
        Binding("slash", "focus_filter", "Filter"),
        Binding("c", "quick('phase:capture')", "Capture only"),
        Binding("x", "quick('')", "Clear filter"),
        Binding("escape", "back", "Back"),
    ]

    def __init__(self, path: Path, jump_seq: int | None = None, filt: str = "") -> None:
        super().__init__()
        self.path = Path(path)
        self.jump_seq = jump_seq
        self.initial_filter = filt

    def compose(self) -> ComposeResult:
        yield Header()
        yield Input(self.initial_filter, placeholder=f"filter: {FILTER_HELP}", id="filter")
        yield Static(header_text(), id="columns")
        yield EventTable(self.app.handle(self.path), id="events")
        yield Static("", id="status")
        yield Footer()

    @property
    def settled(self) -> bool:
        """Counted, and every visible row is in (tests and benchmarks wait on it)."""
        return self.is_mounted and self.query_one(EventTable).settled

    def on_mount(self) -> None:
        self.title = self.path.name
        self.sub_title = "timeline"
        table = self.query_one(EventTable)
        table.focus()
        table.load(self._filter(self.initial_filter) or EventFilter(), self.jump_seq)

    def _filter(self, line: str) -> EventFilter | None:
        try:
            return parse_filter(line)
        except FilterError as exc:
            self.query_one("#status", Static).update(Text(str(exc), "red"))
            return None

    def on_input_submitted(self, event: Input.Submitted) -> None:
        filt = self._filter(event.value)
        if filt is not None:
            table = self.query_one(EventTable)
            current = table.row(table.cursor)
            table.load(filt, current.seq if current else None)
            table.focus()

    def on_row_count(self, message: RowCount) -> None:
        if message.error:
            self.query_one("#status", Static).update(Text(message.error, "red"))
            return
        table = self.query_one(EventTable)
        shown = "events" if table.filter == EventFilter() else "matching events"
        self.query_one("#status", Static).update(
            f"{message.total:,} {shown}  ·  enter: op detail  ·  /: filter  ·  ?: keys and filter words"
        )

    def on_event_chosen(self, message: EventChosen) -> None:
        from ttrecord.tui.screens.op_detail import OpDetailScreen

        self.app.push_screen(OpDetailScreen(self.path, message.seq))

    def action_focus_filter(self) -> None:
        self.query_one("#filter", Input).focus()

    def action_quick(self, line: str) -> None:
        self.query_one("#filter", Input).value = line
        filt = self._filter(line)
        if filt is not None:
            self.query_one(EventTable).load(filt)

    def action_back(self) -> None:
        if self.focused is self.query_one("#filter", Input):
            self.query_one(EventTable).focus()
        else:
            self.app.pop_screen()
