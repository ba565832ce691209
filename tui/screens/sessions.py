"""Every session given on the command line or found in a folder, one row each."""

from __future__ import annotations

import importlib
from pathlib import Path

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import DataTable, Header, Static

from ttrecord.textsafe import clean
from ttrecord.tui.columns import MIDDLE, NEVER, Column
from ttrecord.tui.format import SEVERITY_STYLE, STATUS_STYLE, when
from ttrecord.tui.messages import Loaded
from ttrecord.tui.snapshots import SessionSummary, summarize
from ttrecord.tui.widgets.tables import FitTable, fill_table
from ttrecord.tui.widgets.footer import KeyFooter

DIFF_MODULE = "ttrecord.tui.screens.diff"
# Events and findings are what the list is for: they never shrink; the start time and the
# backend give way first.
COLUMNS = (
    Column(" ", 9, shorten=NEVER), Column("session", 4, min=12, shorten=MIDDLE),
    Column("script", 2, min=10, shorten=MIDDLE, optional=True),
    Column("started", 1, shorten=NEVER, optional=True), Column("status", 5, min=6),
    Column("backend", 0, min=8, optional=True), Column("events", 9, shorten=NEVER),
    Column("findings", 9, shorten=NEVER),
)


class SessionsScreen(Screen):
    DEFAULT_CSS = """
    SessionsScreen #sessions-note { padding: 0 1; color: $text-muted; }
    SessionsScreen DataTable { height: 1fr; }
    """
    HELP_TITLE = "Sessions"
    BINDINGS = [
        Binding("enter", "open", "Open", priority=True),
        Binding("space", "mark", "Mark"),
        Binding("d", "diff", "Diff marked"),
        Binding("r", "reload", "Reload"),
    ]

    def __init__(self, paths: list[Path], note: str = "") -> None:
        super().__init__()
        self.paths = paths
        self.note = note
        self.summaries: list[SessionSummary] = []
        self.marked: list[Path] = []
        self._loaded = False
        self.settled = not paths  # everything it shows is in (tests and benchmarks wait on it)

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(Text(clean(self.note)), id="sessions-note")  # folder names are data
        yield FitTable(id="sessions", cursor_type="row", zebra_stripes=True)
        yield KeyFooter()

    def on_mount(self) -> None:
        self.title = "ttrecord"
        self.sub_title = "sessions"

    def on_screen_resume(self) -> None:
        # Loaded when first shown: with one session given, the overview opens on top at once
        # and should not share the disk with this list.
        if not self._loaded:
            self._loaded = True
            self.action_reload()

    def action_reload(self) -> None:
        if not self.paths:
            self.query_one("#sessions-note", Static).update(Text(
                clean(self.note) + "\nNo ttrecord sessions here. Record one with"
                " `ttrecord run -o session.db script.py`, or pass session files."
            ))  # fmt: skip
            return
        self._load(list(self.paths))

    @work(thread=True, exclusive=True)
    def _load(self, paths: list[Path]) -> None:
        from ttrecord.report.ranks import run_lines

        summaries = [summarize(p) for p in paths]
        self.post_message(Loaded((summaries, run_lines(paths))))

    def on_loaded(self, message: Loaded) -> None:
        self.summaries, runs = message.data
        if runs:  # the ranks of a multi-host run, compared (TR019)
            note = "\n".join([clean(self.note), *(clean(line, 400) for line in runs)]).strip()
            self.query_one("#sessions-note", Static).update(Text(note))
        self.settled = True
        self._fill()

    def _fill(self) -> None:
        rows = []
        for s in self.summaries:
            mark = "●" if s.path in self.marked else " "
            if s.error or s.info is None:
                rows.append([mark, s.path.name, Text(s.error or "unreadable", "red"), "", "", "", "", ""])
                continue
            status = Text(s.info.status, STATUS_STYLE.get(s.info.status, ""))
            if s.died_call:
                status.append(f" in {s.died_call}", "red")
            findings = Text()
            for sev in ("error", "warning", "info"):
                if s.severities.get(sev):
                    findings.append(f"{s.severities[sev]} {sev}  ", SEVERITY_STYLE[sev])
            findings.rstrip()
            rows.append([mark, s.path.name, Path(s.info.script).name, when(s.info.started_at),
                         status, s.info.backend, f"{s.events:,}", findings or "–"])  # fmt: skip
        fill_table(self.query_one(DataTable), COLUMNS, rows)

    def _current(self) -> SessionSummary | None:
        table = self.query_one(DataTable)
        if not self.summaries or table.cursor_row >= len(self.summaries):
            return None
        return self.summaries[table.cursor_row]

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.action_open()

    def action_open(self) -> None:
        current = self._current()
        if current is None:
            return
        from ttrecord.tui.screens.overview import OverviewScreen

        self.app.push_screen(OverviewScreen(current.path))

    def action_mark(self) -> None:
        current = self._current()
        if current is None:
            return
        if current.path in self.marked:
            self.marked.remove(current.path)
        else:
            self.marked = [*self.marked, current.path][-2:]
        self._fill()

    def action_diff(self) -> None:
        if len(self.marked) != 2:
            self.notify("Mark two sessions with space, then press d.", severity="warning")
            return
        try:
            module = importlib.import_module(DIFF_MODULE)
        except ModuleNotFoundError as exc:
            if exc.name != DIFF_MODULE:
                raise
            self.notify("Diffing sessions is not available in this version.", severity="warning")
            return
        self.app.push_screen(module.DiffScreen(*self.marked))
