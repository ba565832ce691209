"""Every event, paged from SQLite, with phase bands and a filter line."""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Header, Input, Static

from textual import work

from ttrecord.errors import SessionError
from ttrecord.store.reader import EventFilter
from ttrecord.tui.filters import FilterError, parse_filter
from ttrecord.tui.handle import handle_of
from ttrecord.tui.live import POLL_SECONDS, RUNNING
from ttrecord.tui.messages import EventChosen, Grown, RowCount
from ttrecord.tui.queue_lanes import QueueLanes
from ttrecord.tui.widgets.event_table import EventTable, header_text
from ttrecord.tui.widgets.footer import KeyFooter
from ttrecord.textsafe import clean


class TimelineScreen(Screen):
    DEFAULT_CSS = """
    TimelineScreen #filter { margin: 0 0; }
    TimelineScreen #columns { padding: 0 0 0 1; text-style: bold; background: $boost; }
    TimelineScreen #status { padding: 0 1; color: $text-muted; }
    """
    HELP_TITLE = "Timeline"
    HELP_WIDGETS = (EventTable,)
    BINDINGS = [
        Binding("slash", "focus_filter", "Filter"),
        Binding("c", "quick('phase:capture')", "Capture only"),
        Binding("x", "quick('')", "Clear filter"),
        Binding("r", "race", "Other race access", show=False),
        Binding("escape", "back", "Back"),
    ]

    def __init__(self, path: Path, jump_seq: int | None = None, filt: str = "",
                 marks: dict[int, str] | None = None) -> None:  # fmt: skip
        """`marks`: {seq: label} of a race's two accesses (TR012), shown in the queue lanes."""
        super().__init__()
        self.path = Path(path)
        self.jump_seq = jump_seq
        self.marks = dict(marks or {})
        self.initial_filter = filt
        self._poll: Timer | None = None  # re-counts the rows while the session is being recorded
        self._live = False

    def compose(self) -> ComposeResult:
        yield Header()
        yield Input(self.initial_filter, placeholder="filter, e.g. phase:capture op:matmul (? lists the words)", id="filter")
        yield Static("", id="columns")
        yield EventTable(handle_of(self.app, self.path), id="events")
        yield Static("", id="status")
        yield KeyFooter()

    @property
    def settled(self) -> bool:
        """Counted, and every visible row is in (tests and benchmarks wait on it)."""
        return self.is_mounted and self.query_one(EventTable).settled

    def on_mount(self) -> None:
        self.title = clean(self.path.name)  # a file name is data: no escape reaches the terminal
        self.sub_title = "timeline"
        table = self.query_one(EventTable)
        table.focus()
        table.load(self._filter(self.initial_filter) or EventFilter(), self.jump_seq)
        self._poll = self.set_interval(POLL_SECONDS, self._grow)
        if self.marks:
            self._show_lanes()
        else:
            self._find_queues()

    @work(thread=True, group="queues")
    def _find_queues(self) -> None:
        try:
            uses = self.query_one(EventTable).handle.run(lambda s: s.uses_queues())
        except SessionError:
            return
        if uses:
            self.app.call_from_thread(self._show_lanes)

    def _show_lanes(self) -> None:
        """One lane per command queue and one for the host (tui/queue_lanes.py)."""
        table = self.query_one(EventTable)
        table.lanes = QueueLanes(2, self.marks)
        self.query_one("#columns", Static).update(header_text(table.columns(), table.lanes))
        table.refresh()
        if self.marks:
            self._status(table.total)

    @work(thread=True, exclusive=True, group="grow")
    def _grow(self) -> None:
        table = self.query_one(EventTable)
        generation, filt = table.generation, table.filter
        try:
            status, total = table.handle.run(lambda s: (s.info().status, s.event_count(filt)))
        except SessionError:
            return  # a read racing the recorder's write: the next poll reads it again
        self.post_message(Grown(generation, total, status))

    def on_grown(self, message: Grown) -> None:
        table = self.query_one(EventTable)
        was_live, self._live = self._live, message.status == RUNNING
        if not self._live and self._poll is not None:
            self._poll.stop()  # the run is over (or was never running): nothing more to follow
            self._poll = None
        if message.generation == table.generation:
            before = table.total
            table.grow(message.total)
            # Only news replaces the status line (it may be showing a filter error).
            if self._live or was_live or table.total != before:
                self._status(table.total)

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

    def _header(self) -> None:
        table = self.query_one(EventTable)
        self.query_one("#columns", Static).update(Text(header_text(table.columns(), table.lanes)))

    def on_resize(self) -> None:
        self.call_after_refresh(self._header)

    def on_row_count(self, message: RowCount) -> None:
        self.call_after_refresh(self._header)
        if message.error:
            self.query_one("#status", Static).update(Text(message.error, "red"))
            return
        self._status(message.total)

    def _status(self, total: int) -> None:
        table = self.query_one(EventTable)
        shown = "events" if table.filter == EventFilter() else "matching events"
        live = "  ·  recording: following it live" if self._live else ""
        race = ""
        if self.marks:
            race = "  ·  race: " + " ↔ ".join(f"⚡{label} event {seq}" for seq, label in
                                             sorted(self.marks.items(), key=lambda m: m[1])) + " (r: the other)"  # fmt: skip
        self.query_one("#status", Static).update(
            f"{total:,} {shown}{live}{race}"
        )

    def on_event_chosen(self, message: EventChosen) -> None:
        from ttrecord.tui.screens.op_detail import OpDetailScreen

        self.app.push_screen(OpDetailScreen(self.path, message.seq))

    def action_race(self) -> None:
        """Jump between the two accesses of the race this timeline was opened for."""
        if len(self.marks) < 2:
            return
        table = self.query_one(EventTable)
        current = table.row(table.cursor)
        seqs = sorted(self.marks)
        target = seqs[1] if current is not None and current.seq == seqs[0] else seqs[0]
        table.load(table.filter, target)

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
