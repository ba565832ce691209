"""One call: its arguments, and every input and output tensor with where it lives."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import DataTable, Header, Static

if TYPE_CHECKING:
    from ttrecord.store.reader import Session

from ttrecord.errors import SessionError
from ttrecord.events import Event
from ttrecord.tui.handle import handle_of
from ttrecord.tui.format import PHASE_COLOR, duration, hexaddr, size_text
from ttrecord.tui.messages import Loaded
from ttrecord.tui.columns import NEVER, Column
from ttrecord.tui.widgets.tables import FitTable, fill_table
from ttrecord.tui.widgets.footer import KeyFooter
from ttrecord.textsafe import clean

# Where the data lives (address, size, shape) outranks how it is described (dtype, layout,
# memory config); ids and numbers are never cut, descriptions shrink or give way.
TENSOR_COLUMNS = (
    Column("role", 9, shorten=NEVER), Column("#", 9, shorten=NEVER),
    Column("tensor", 2, shorten=NEVER, optional=True), Column("storage", 3, min=4),
    Column("shape", 7, shorten=NEVER), Column("dtype", 4, min=6, optional=True),
    Column("layout", 1, min=4, optional=True), Column("memory config", 0, min=8, optional=True),
    Column("buffer", 5, min=4), Column("address", 8, shorten=NEVER),
    Column("size (bank)", 6, shorten=NEVER),
)
ARG_COLUMNS = (Column("argument", 2, min=10), Column("value", 1, min=10))
CHILD_COLUMNS = (Column("seq", 9, shorten=NEVER), Column("kind", 2, min=5), Column("op", 1, min=8),
                 Column("address", 8, shorten=NEVER))


def load_op(session: Session, seq: int) -> tuple[Event | None, list[Event]]:
    event = session.event(seq)
    return event, (session.children(seq) if event is not None else [])


class OpDetailScreen(Screen):
    DEFAULT_CSS = """
    OpDetailScreen #head { padding: 0 1 1 1; height: auto; }
    OpDetailScreen .label { padding: 0 1; text-style: bold; color: $accent; height: auto; }
    OpDetailScreen DataTable { height: auto; max-height: 16; margin-bottom: 1; }
    """
    HELP_TITLE = "Op detail"
    BINDINGS = [
        Binding("t", "timeline", "Timeline"),
        Binding("escape", "app.pop_screen", "Back"),
    ]

    def __init__(self, path: Path, seq: int) -> None:
        super().__init__()
        self.path = Path(path)
        self.seq = seq
        self.event: Event | None = None
        self.settled = False  # everything it shows is in (tests and benchmarks wait on it)

    def compose(self) -> ComposeResult:
        yield Header()
        with VerticalScroll():
            yield Static("Loading…", id="head")
            yield Static("Arguments", classes="label")
            yield FitTable(id="args", cursor_type="row", show_cursor=False)
            yield Static("Tensors", classes="label")
            yield FitTable(id="tensors", cursor_type="row")
            yield Static("Nested calls", classes="label")
            yield FitTable(id="children", cursor_type="row", show_cursor=False)
        yield KeyFooter()

    def on_mount(self) -> None:
        self.title = clean(self.path.name)  # a file name is data: no escape reaches the terminal
        self.sub_title = f"event #{self.seq}"
        self._load()

    @work(thread=True, exclusive=True)
    def _load(self) -> None:
        try:
            self.post_message(Loaded(handle_of(self.app, self.path).run(lambda s: load_op(s, self.seq))))
        except SessionError as exc:
            self.post_message(Loaded(None, str(exc)))

    def on_loaded(self, message: Loaded) -> None:
        head = self.query_one("#head", Static)
        self.settled = True
        if message.error or message.data[0] is None:
            head.update(Text(message.error or f"No event #{self.seq} in this session.", "red"))
            return
        ev, children = message.data
        self.event = ev
        text = Text()
        text.append(f"#{ev.seq} {ev.name}", "bold")
        text.append(f"  {ev.kind.label}  ")
        text.append(str(ev.phase), PHASE_COLOR.get(str(ev.phase), ""))
        if ev.trace is not None:
            text.append(f"  trace {ev.trace}")
        if ev.device is not None:
            text.append(f"  device {ev.device}")
        text.append(f"  {duration(ev.dur_ns)}")
        text.append(f"\nstatus {ev.status}", "red" if str(ev.status) != "ok" else "")
        if ev.error:
            text.append(f"\n{ev.error}", "red")
        if ev.callsite:
            text.append(f"\ncalled at {ev.callsite.file}:{ev.callsite.line} in {ev.callsite.function}")
        if ev.buffer is not None:
            b = ev.buffer
            text.append(f"\nbuffer {b.buffer_type} {hexaddr(b.address)} size {size_text(b.size)}")
        head.update(text)
        args = [[k, v if isinstance(v, str) else json.dumps(v)] for k, v in (ev.args or {}).items()]
        fill_table(self.query_one("#args", DataTable), ARG_COLUMNS,
                   args or [[Text("none recorded", "dim"), ""]])  # fmt: skip
        tensors = []
        for role, refs in (("in", ev.inputs), ("out", ev.outputs)):
            for pos, ref in enumerate(refs):
                buf = ref.buffer
                tensors.append([
                    role, pos, "" if ref.tensor_id is None else ref.tensor_id, ref.storage,
                    "×".join(map(str, ref.shape)), ref.dtype or "", ref.layout or "",
                    ref.memory_config or "", buf.buffer_type if buf else "",
                    hexaddr(buf.address) if buf else "", size_text(buf.size) if buf else "",
                ])  # fmt: skip
        fill_table(self.query_one("#tensors", DataTable), TENSOR_COLUMNS, tensors)
        fill_table(self.query_one("#children", DataTable), CHILD_COLUMNS,
                   [[c.seq, c.kind.label, c.name, hexaddr(c.buffer.address) if c.buffer else ""]
                    for c in children])  # fmt: skip

    def action_timeline(self) -> None:
        from ttrecord.tui.screens.timeline import TimelineScreen

        self.app.push_screen(TimelineScreen(self.path, jump_seq=self.seq))
