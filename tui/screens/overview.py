"""One session at a glance: status, backend, devices, traces, and findings by severity."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import DataTable, Header, Static

from ttrecord.meshes import device_label, meshes_of
from ttrecord.textsafe import clean, clean_deep
from ttrecord.errors import SessionError
from ttrecord.findings import Finding
from ttrecord.store.reader import Session
from ttrecord.tui.handle import SessionHandle, handle_of
from ttrecord.tui.columns import MIDDLE, NEVER, Column
from ttrecord.tui.finding_groups import FindingGroup, group_findings, traces_text
from ttrecord.tui.format import SEVERITY_STYLE, STATUS_STYLE, site, size_text, when
from ttrecord.tui.live import POLL_SECONDS, RUNNING, AnalysisPacer
from ttrecord.tui.messages import FindingsComputed, LiveFindings, Loaded
from ttrecord.tui.snapshots import OverviewData, analyse, overview
from ttrecord.tui.widgets.tables import FitTable, fill_table
from ttrecord.tui.widgets.footer import KeyFooter


MAX_TRACE_ROWS = 50  # a long decode loop captures thousands; the timeline lists them all
MAX_MEMBER_ROWS = 500  # findings listed under an opened group
# Severity, rule, count and line say what and where: they give way last.
FINDING_COLUMNS = (
    Column("severity", 8, shorten=NEVER), Column("rule", 9, shorten=NEVER),
    Column("title", 1, min=12), Column("count", 7, shorten=NEVER),
    Column("trace", 3, min=5, optional=True), Column("line", 6, min=14, shorten=MIDDLE),
)
TRACE_COLUMNS = (
    Column("device", 5, shorten=NEVER), Column("trace", 5, shorten=NEVER),
    Column("ops", 4, shorten=NEVER), Column("replays", 4, shorten=NEVER),
    Column("capture seqs", 3, shorten=NEVER, optional=True),
    Column("released", 2, shorten=NEVER, optional=True),
)


class OverviewScreen(Screen):
    DEFAULT_CSS = """
    OverviewScreen #summary { padding: 0 1; height: auto; }
    OverviewScreen #notices { padding: 0 1; height: auto; color: $warning; }
    OverviewScreen .section { padding: 1 1 0 1; text-style: bold; height: auto; }
    OverviewScreen #traces { height: auto; max-height: 8; }
    OverviewScreen #findings { height: 1fr; }
    OverviewScreen #findings-note { padding: 0 1; height: auto; }
    """
    HELP_TITLE = "Overview"
    BINDINGS = [
        Binding("enter", "open_finding", "Open", priority=True),
        Binding("t", "timeline", "Timeline"),
        Binding("m", "memory", "Memory"),
        Binding("d", "diff_captures", "Diff captures"),
        Binding("p", "diff_prep", "Diff prep"),
        Binding("escape", "app.pop_screen", "Back"),
    ]

    def __init__(self, path: Path) -> None:
        super().__init__()
        self.path = Path(path)
        self.handle: SessionHandle  # opened in on_mount
        self.data: OverviewData | None = None
        self.settled = False  # everything it shows is in (tests and benchmarks wait on it)
        self._poll: Timer | None = None  # the timer re-reading a session that is still being recorded
        self._pacer = AnalysisPacer()
        self._live_findings: tuple | None = None
        self.groups: list[FindingGroup] = []
        self.expanded: set[int] = set()  # groups opened to their findings
        self.row_items: list[tuple[FindingGroup, Finding | None]] = []  # per findings-table row

    def compose(self) -> ComposeResult:
        yield Header()
        with Vertical():
            yield Static("Loading…", id="summary")
            yield Static("", id="notices")
            yield Static("Findings", id="findings-label", classes="section")
            yield Static("", id="findings-note")
            yield FitTable(id="findings", cursor_type="row")
            yield Static("Traces", classes="section")
            yield FitTable(id="traces", cursor_type="row", show_cursor=False)
        yield KeyFooter()

    def on_mount(self) -> None:
        self.title = clean(self.path.name)  # a file name is data: no escape reaches the terminal
        self.sub_title = "overview"
        self.handle = handle_of(self.app, self.path)
        self.query_one("#findings", DataTable).focus()
        self._load()

    @work(thread=True, exclusive=True)
    def _load(self) -> None:
        if self._poll is not None:
            self.handle.close()  # a running session: drop the reader's caches (call sites)
        try:
            self.post_message(Loaded(self.handle.run(overview)))
        except SessionError as exc:
            self.post_message(Loaded(None, str(exc)))

    def on_loaded(self, message: Loaded) -> None:
        if message.error and self._poll is not None:
            return  # a read racing the recorder's write: the next poll reads it again
        if message.error:
            self.settled = True
            self.query_one("#summary", Static).update(
                Text(f"This session cannot be shown.\n{message.error}", "bold red")
            )
            return
        self.data = data = message.data
        info = data.info
        text = Text()
        text.append(f"{Path(info.script).name}", "bold")
        text.append("  ")
        text.append(info.status, STATUS_STYLE.get(info.status, ""))
        text.append(f"  backend {info.backend}")
        if info.backend_reason:
            text.append(f" ({info.backend_reason})", "dim")
        text.append(f"\nstarted {when(info.started_at)}   {data.events:,} events  ")
        text.append("  ".join(f"{p} {n:,}" for p, n in sorted(data.phases.items())), "dim")
        meshes = meshes_of(data.devices)
        for dev in data.devices:
            text.append(
                f"\n{device_label(dev.id, meshes)}: {dev.arch or '?'}, {dev.num_dram_banks or '?'} DRAM banks,"
                f" {dev.num_l1_banks or '?'} L1 banks, trace region {size_text(dev.trace_region_size)}"
            )
        self.query_one("#summary", Static).update(text)
        live = self._follow(info.status, data.events)
        notices = list(data.notices)
        if live:
            notices.append(f"Following the recording live (every {POLL_SECONDS:g} s).")
        self.query_one("#notices", Static).update(Text("\n".join(notices)))  # data, not markup
        if live and not data.findings:
            if self._live_findings:
                self.data = replace(data, findings=self._live_findings)
            self._show_findings(self._live_findings or (), analysing=self._live_findings is None)
        else:
            self._show_findings(data.findings, analysing=data.needs_analysis, unchecked=data.unchecked)
        rows = [
            [t.device, t.trace_id, t.ops, t.executions,
             f"{t.begin_seq}–{t.end_seq if t.end_seq is not None else '?'}",
             t.release_seq if t.release_seq is not None else "never"]
            for t in data.traces[:MAX_TRACE_ROWS]
        ]  # fmt: skip
        if len(data.traces) > MAX_TRACE_ROWS:
            more = len(data.traces) - MAX_TRACE_ROWS
            rows.append(["", "", "", "", Text(f"… {more:,} more (timeline: kind:trace_begin)", "dim"), ""])
        fill_table(self.query_one("#traces", DataTable), TRACE_COLUMNS, rows)
        if data.needs_analysis:
            self._analyse()
        else:
            self.settled = True

    def _follow(self, status: str, events: int) -> bool:
        """Poll while the session is being recorded; analyse again as events arrive."""
        if status != RUNNING:
            if self._poll is not None:
                self._poll.stop()
                self._poll = None
            return False
        if self._poll is None:
            self._poll = self.set_interval(POLL_SECONDS, self._load)
        if self._pacer.due(events):
            self._analyse_live(self._pacer.started(events))
        return True

    @work(thread=True, exclusive=True, group="live-analysis")
    def _analyse_live(self, started_at: float) -> None:
        try:
            with Session.open(self.path) as session:
                self.post_message(LiveFindings(analyse(session), started_at))
        except Exception as exc:  # a half-written session: try again at the next poll
            self.post_message(LiveFindings((), started_at, f"The analysis failed: {exc}"))

    def on_live_findings(self, message: LiveFindings) -> None:
        self._pacer.finished(message.started_at)
        if self._poll is None:
            return  # the run ended meanwhile: the final analysis is the one to show
        if message.error is None:
            self._live_findings = message.findings
            if self.data is not None:
                self.data = replace(self.data, findings=message.findings)
            self._show_findings(message.findings)

    @work(thread=True, exclusive=True, group="analysis")
    def _analyse(self) -> None:
        try:
            # Its own connection: a long analysis must not hold up the shared handle's queries.
            with Session.open(self.path) as session:
                self.post_message(FindingsComputed(clean_deep(analyse(session))))
        except Exception as exc:  # the analysis failing must not take the viewer down
            self.post_message(FindingsComputed((), clean(f"The analysis failed: {exc}", 500)))

    def on_findings_computed(self, message: FindingsComputed) -> None:
        if self.data is not None:
            self.data = replace(self.data, findings=message.findings, needs_analysis=False)
        self._show_findings(message.findings, error=message.error)
        self.settled = True

    def _show_findings(self, findings: Sequence[Finding], analysing: bool = False, error: str | None = None,
                       unchecked: bool = False) -> None:  # fmt: skip
        groups = group_findings(findings)
        if [g.findings for g in groups] != [g.findings for g in self.groups]:
            self.expanded = set()
        self.groups = groups
        counts = Counter(str(f.severity) for f in findings)
        label = Text("Findings")
        for sev in ("error", "warning", "info"):
            if counts.get(sev):
                label.append(f"  {counts[sev]} {sev}{'s' if counts[sev] > 1 else ''}", SEVERITY_STYLE[sev])
        if len(groups) < len(findings):
            label.append(f"  ({len(groups)} rule/line groups; enter opens one)", "dim")
        self.query_one("#findings-label", Static).update(label)
        note = Text()
        if error:
            note = Text(error, "red")
        elif unchecked:
            note = Text(f"No stored findings: run `ttrecord check {self.path.name}` to analyse it.", "yellow")
        elif analysing:
            note = Text("Analysing the session for hazards…", "yellow")
        elif not findings:
            note = Text("No hazards found.", "green")
        notice = self.query_one("#findings-note", Static)
        notice.update(note)
        notice.display = bool(note)
        self._fill_findings()

    def _fill_findings(self) -> None:
        """One row per (rule, call site); an opened group lists its findings under it."""
        rows, self.row_items = [], []
        for n, g in enumerate(self.groups):
            f = g.first
            many = len(g.findings) > 1
            title = Text(("▾ " if n in self.expanded else "▸ ") if many else "")
            title.append(f.title)
            rows.append([Text(g.severity, SEVERITY_STYLE.get(g.severity, "")), f.rule, title,
                         f"{g.count:,}", g.traces, site(f.file, f.line)])  # fmt: skip
            self.row_items.append((g, None if many else f))
            if n in self.expanded:
                for member in g.findings[:MAX_MEMBER_ROWS]:
                    first = member.message.split(". ")[0]
                    rows.append(["", "", Text(f"  {first}", "dim"), f"{member.occurrences:,}",
                                 traces_text([member]), site(member.file, member.line)])  # fmt: skip
                    self.row_items.append((g, member))
        fill_table(self.query_one("#findings", DataTable), FINDING_COLUMNS, rows)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        if event.data_table.id == "findings":
            self.action_open_finding()

    def action_open_finding(self) -> None:
        """Open the finding under the cursor; on a group of several, open or close the group."""
        if self.data is None or not self.row_items:
            return
        table = self.query_one("#findings", DataTable)
        group, finding = self.row_items[min(table.cursor_row, len(self.row_items) - 1)]
        if finding is None:
            n = self.groups.index(group)
            self.expanded ^= {n}
            self._fill_findings()
            return
        from ttrecord.tui.screens.finding import FindingScreen

        self.app.push_screen(FindingScreen(self.path, finding))

    def action_timeline(self) -> None:
        from ttrecord.tui.screens.timeline import TimelineScreen

        self.app.push_screen(TimelineScreen(self.path))

    def action_diff_captures(self) -> None:
        """Capture 1 against capture 2 of this session (`a`/`b` then step through the rest)."""
        if self._captures() < 2:
            self.notify("This session has fewer than two captures; p diffs a capture against"
                        " its prep run.", severity="warning")  # fmt: skip
            return
        from ttrecord.tui.screens.diff import DiffScreen

        self.app.push_screen(DiffScreen(self.path, self.path, capture_a=1, capture_b=2))

    def action_diff_prep(self) -> None:
        """Capture 1 against the prep run right before it (`a` steps to the next capture)."""
        if self._captures() < 1:
            self.notify("This session has no trace capture.", severity="warning")
            return
        from ttrecord.tui.screens.diff import DiffScreen

        self.app.push_screen(DiffScreen(self.path, capture_a=1, prep=True))

    def _captures(self) -> int:
        return len(self.data.traces) if self.data is not None else 0

    def action_memory(self) -> None:
        from ttrecord.tui.screens.memory import MemoryScreen

        self.app.push_screen(MemoryScreen(self.path))
