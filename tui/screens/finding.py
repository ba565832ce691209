"""One finding, what to do first: the line to change (and the calls down to the ttnn call),
the fix; then the evidence, what happened, the stack and the related events.

The page scrolls from the first key (PageDown, arrows, End): the scroll area has the focus,
and tab moves it to the related events."""

from __future__ import annotations

from pathlib import Path

from rich.syntax import Syntax
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import DataTable, Header, Static

from ttrecord.errors import SessionError
from ttrecord.findings import Finding
from ttrecord.report.keep_going import line as keep_going_line
from ttrecord.report.lead import frames
from ttrecord.tui.handle import handle_of
from ttrecord.tui.format import SEVERITY_STYLE, evidence_lines, hexaddr, site
from ttrecord.tui.messages import Loaded
from ttrecord.tui.snapshots import FindingData, finding_data
from ttrecord.tui.columns import MIDDLE, NEVER, Column
from ttrecord.tui.widgets.tables import FitTable, fill_table
from ttrecord.tui.widgets.footer import KeyFooter
from ttrecord.textsafe import clean


RELATED_COLUMNS = (
    Column("seq", 9, shorten=NEVER), Column("phase", 8, shorten=NEVER),
    Column("kind", 2, min=5, optional=True), Column("op", 3, min=8),
    Column("call site", 6, min=14, shorten=MIDDLE), Column("addresses", 1, min=10, optional=True),
)


class FindingBody(VerticalScroll):
    """The finding's page; it has the focus, and its scroll key is shown in the footer."""

    BINDINGS = [Binding("pagedown", "page_down", "Scroll")]


class FindingScreen(Screen):
    DEFAULT_CSS = """
    FindingScreen VerticalScroll { height: 1fr; }
    FindingScreen .block { padding: 0 1 1 1; height: auto; }
    FindingScreen .label { padding: 0 1; text-style: bold; color: $accent; height: auto; }
    FindingScreen #source { padding: 0 1 1 1; height: auto; }
    FindingScreen #related { height: auto; max-height: 12; }
    """
    HELP_TITLE = "Finding"
    BINDINGS = [
        Binding("t", "timeline", "Timeline"),
        Binding("m", "memory", "Memory"),
        Binding("o", "op", "Op detail"),
        Binding("tab", "app.focus_next", "Events"),
        Binding("escape", "app.pop_screen", "Back"),
    ]

    def __init__(self, path: Path, finding: Finding) -> None:
        super().__init__()
        self.path = Path(path)
        self.finding = finding
        self.data: FindingData | None = None
        self.settled = False  # everything it shows is in (tests and benchmarks wait on it)

    def compose(self) -> ComposeResult:
        f = self.finding
        yield Header()
        with FindingBody():
            title = Text()
            title.append(f" {str(f.severity).upper()} ", SEVERITY_STYLE.get(str(f.severity), "") + " reverse")
            title.append(f" {f.rule}  {f.title}", "bold")
            if f.file:
                title.append(f"\nat {f.file}:{f.line}" + (f" in {f.function}" if f.function else ""))
            yield Static(title, id="title", classes="block")
            yield Static(Text(self._where()), id="where", classes="label")  # data, not markup
            yield Static("Loading source…", id="source")
            yield Static("", id="calls", classes="block")
            yield Static("Fix", classes="label")
            yield Static(Text(f.fix), id="fix", classes="block")
            yield Static("Evidence", classes="label")
            yield Static(self._evidence(), id="evidence", classes="block")
            yield Static(Text(f.message), id="message", classes="block")  # data, not markup
            yield Static("Stack", classes="label")
            yield Static(self._stack(), id="stack", classes="block")
            yield Static("Related events (enter: show on the timeline)", classes="label")
            yield FitTable(id="related", cursor_type="row")
        yield KeyFooter()

    def _evidence(self) -> Text:
        text = Text()
        for line in evidence_lines(self.finding.evidence):
            key, sep, rest = line.partition(":")
            text.append(key + sep, "bold" if not line.startswith(" ") else "")
            text.append(rest + "\n")
        text.rstrip()
        return text if text else Text("No evidence recorded.", "dim")

    def _where(self) -> str:
        f = self.finding
        if not f.file:
            return "Source"
        if len(frames(f)) > 1:  # the line to change is up the stack; said when the data is in
            return "Change here"
        return f"Source  {f.file}:{f.line}" + (f" in {f.function}" if f.function else "")


    def _stack(self) -> Text:
        if not self.finding.stack:
            return Text("No stack recorded.", "dim")
        return Text("\n".join(f"{site(file, line)} in {func}" for file, line, func in self.finding.stack))

    def on_mount(self) -> None:
        self.title = clean(self.path.name)  # a file name is data: no escape reaches the terminal
        self.sub_title = clean(f"{self.finding.rule} {self.finding.title}")
        self.query_one(VerticalScroll).focus()  # keys scroll the page from the first one
        self._load()

    @work(thread=True, exclusive=True)
    def _load(self) -> None:
        try:
            data = handle_of(self.app, self.path).run(lambda s: finding_data(s, self.finding))
            self.post_message(Loaded(data))
        except SessionError as exc:
            self.post_message(Loaded(None, str(exc)))

    def on_loaded(self, message: Loaded) -> None:
        source = self.query_one("#source", Static)
        self.settled = True
        if message.error:
            source.update(Text(message.error, "red"))
            return
        self.data = data = message.data
        if data.change is not None and data.calls:
            file, line, function = data.change
            self.query_one("#where", Static).update(Text(
                f"Change here  {site(file, line)}" + (f" in {function}" if function else "")))
        if data.source is None:
            source.update(Text(data.source_note or "No source.", "yellow"))
        else:
            src = data.source
            dark = self.app.current_theme.dark if self.app.current_theme else True
            around = 2  # the line to change, the fix and the evidence fit a 24-line terminal
            source.update(
                Syntax(src.text, "python", line_numbers=True,
                       line_range=(max(src.first, src.line - around), min(src.last, src.line + around)),
                       highlight_lines={src.line}, theme="monokai" if dark else "default",
                       background_color="default")  # fmt: skip
            )
        calls = Text()
        for call in data.calls:
            calls.append(f"{call.lead} ", "dim")
            calls.append(f"{site(call.file, call.line)}" + (f" in {call.function}" if call.function else ""))
            if call.text:
                calls.append(f"\n  {call.line:>5} | {call.text}", "bold")
            calls.append("\n")
        if data.keep_going:
            calls.append(keep_going_line(data.keep_going) + "\n", "magenta")
        if data.changed_on_disk:
            calls.append("The file changed on disk since the recording: the lines shown are the"
                         " recorded ones.", "yellow")  # fmt: skip
        calls.rstrip()
        self.query_one("#calls", Static).update(calls)
        self.query_one("#calls", Static).display = bool(calls.plain)
        rows = []
        for row in data.related:
            addrs = hexaddr(row.address) if row.address is not None else " ".join(
                f"{role}:{hexaddr(a)}" for role, a in row.tensors
            )
            rows.append([row.seq, row.phase, row.kind, row.name, site(row.file, row.line), addrs])
        fill_table(self.query_one("#related", DataTable), RELATED_COLUMNS, rows)

    def _selected_seq(self) -> int | None:
        if self.data and self.data.related:
            table = self.query_one("#related", DataTable)
            return self.data.related[min(table.cursor_row, len(self.data.related) - 1)].seq
        return self.finding.events[0] if self.finding.events else None

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.action_timeline()

    def action_timeline(self) -> None:
        from ttrecord.tui.screens.timeline import TimelineScreen

        marks = None
        if self.finding.rule == "TR012":  # the race's two accesses, linked on the timeline
            from ttrecord.tui.queue_lanes import race_marks

            marks = race_marks(self.finding.evidence)
        self.app.push_screen(TimelineScreen(self.path, jump_seq=self._selected_seq(), marks=marks))

    def action_memory(self) -> None:
        from ttrecord.tui.screens.memory import MemoryScreen

        self.app.push_screen(
            MemoryScreen(self.path, focus_seqs=self.finding.events, device=self.finding.device)
        )

    def action_op(self) -> None:
        seq = self._selected_seq()
        if seq is not None:
            from ttrecord.tui.screens.op_detail import OpDetailScreen

            self.app.push_screen(OpDetailScreen(self.path, seq))
