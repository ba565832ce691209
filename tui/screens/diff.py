"""Two captures side by side, op by op, with every changed buffer highlighted.

The diff runs in a thread worker (`ttrecord.analysis.drift.diff_targets`, which reads both
sessions through the store's reader); the screen then only renders the frozen report. The
aligned ops are a ScrollView drawing just the visible lines, so 100,000-op captures scroll as
freely as ten-op ones. `n`/`p` jump between divergent rows, `f` hides the rows that match.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from pathlib import Path

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.geometry import Region, Size
from textual.message import Message
from textual.reactive import reactive
from textual.screen import Screen
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.widgets import Header, Static

from ttrecord.analysis.drift import CaptureSpec, DriftReport, OpPair, PairStatus, diff_targets
from ttrecord.analysis.drift.model import CapturedOp, Tensor
from ttrecord.report.drift import (
    alignment_sentence,
    cause_sentence,
    fmt_change,
    other_op_sentence,
    summary_line,
)
from ttrecord.errors import TtrecordError
from ttrecord.tui.columns import shorten_middle
from ttrecord.store.reader import Session
from ttrecord.tui.widgets.footer import KeyFooter

CHANGED = Style(color="black", bgcolor="yellow", bold=True)
ONLY_A = Style(color="red")
ONLY_B = Style(color="green")
DIM = Style(dim=True)
INDEX_WIDTH = 7
# How a row was aligned, next to its status marker: exact pairs carry none.
MATCH_TAG = {"signature": "s", "call_site": "c", "reordered": "r"}
MATCH_WORDS = {
    "exact": "same op, call site and tensor signature",
    "signature": "same op and tensor signature at another call site",
    "call_site": "same op and call site, other tensors",
    "reordered": "same op and tensor signature, run in another order",
}


@dataclass
class DiffReady(Message):
    """The worker's result: a report, or the one-line reason there is none."""

    report: DriftReport | None
    error: str | None = None
    captures: tuple[int, int] = (0, 0)  # how many captures each side's session has


class CursorMoved(Message):
    """The aligned-ops cursor moved: the detail line below follows it."""


def _tensor_segments(role: str, tensors: tuple[Tensor, ...], changed: set[str],
                     base: Style) -> list[Segment]:  # fmt: skip
    out: list[Segment] = []
    for pos, t in enumerate(tensors):
        text = f"0x{t.address:x}" if t.address is not None else "host"
        slot_changed = f"{role}{pos}" in changed or role in changed
        out.append(Segment(text, CHANGED if slot_changed else base))
        out.append(Segment(" ", base))
    return out


def side_segments(op: CapturedOp | None, changed: set[str], base: Style,
                  width: int | None = None) -> list[Segment]:  # fmt: skip
    """One side of a row: event, op, call site (shortened from the middle, keeping its file
    name and line), then input → output addresses, each whole or left out with an "…"."""
    if op is None:
        return [Segment("—", DIM)]
    name = op.name.removeprefix("ttnn.")
    narrow = width is not None and width < 50  # an 80-column terminal: two sides of 35
    name_w, site_w = (8, 13) if narrow else (11, 15)
    site = shorten_middle(op.site, site_w)
    segs = [Segment(f"{op.seq:<7}{name[:name_w]:<{name_w + 1}}{site:<{site_w + 1}}", base)]
    segs += _tensor_segments("in", op.inputs, changed, base)
    segs.append(Segment("→ ", DIM))
    segs += _tensor_segments("out", op.outputs, changed, base)
    if width is None:
        return segs
    kept: list[Segment] = segs[:1]
    used = segs[0].cell_length
    for seg in segs[1:]:
        if used + seg.cell_length > width:
            kept.append(Segment("…", DIM))
            break
        kept.append(seg)
        used += seg.cell_length
    return kept


def row_strip(index: int, pair: OpPair, width: int, selected: bool) -> Strip:
    status = pair.status
    base = {PairStatus.ONLY_A: ONLY_A, PairStatus.ONLY_B: ONLY_B}.get(status, Style())
    changed = {c.slot for c in pair.changes}
    marker = {PairStatus.SAME: " ", PairStatus.CHANGED: "≠", PairStatus.ONLY_A: "-",
              PairStatus.ONLY_B: "+"}[status]  # fmt: skip
    tag = MATCH_TAG.get(pair.match, " ")
    side = max(10, (width - INDEX_WIDTH - 3) // 2)
    parts = [
        Strip([Segment(f"{marker}{tag}{index:<{INDEX_WIDTH - 2}}", base)]),
        Strip(side_segments(pair.a, changed, base, side - 1)).crop(0, side).extend_cell_length(side),
        Strip([Segment(" │ ", DIM)]),
        Strip(side_segments(pair.b, changed, base, side - 1)).crop(0, side).extend_cell_length(side),
    ]
    strip = Strip.join(parts).crop(0, width).extend_cell_length(width)
    return strip.apply_style(Style(reverse=True)) if selected else strip


class AlignedOps(ScrollView, can_focus=True):
    """The aligned pairs of a report, one per line; `cursor` indexes the visible rows."""

    DEFAULT_CSS = """
    AlignedOps { height: 1fr; }
    """
    BINDINGS = [
        Binding("up,k", "move(-1)", "Up", show=False),
        Binding("down,j", "move(1)", "Down", show=False),
        Binding("pageup", "move(-20)", "Page up", show=False),
        Binding("pagedown", "move(20)", "Page down", show=False),
        Binding("home", "move(-1000000000)", "First", show=False),
        Binding("end", "move(1000000000)", "Last", show=False),
    ]

    cursor: reactive[int] = reactive(0, always_update=True)

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.pairs: list[OpPair] = []
        self.rows: list[int] = []  # indices into pairs that are shown
        self.only_differences = False

    def show(self, pairs: list[OpPair], only_differences: bool, keep: int | None = None) -> None:
        """Show the pairs (or only the differing ones); keep the cursor on pair `keep`."""
        self.pairs = pairs
        self.only_differences = only_differences
        self.rows = [k for k, p in enumerate(pairs)
                     if not only_differences or p.status is not PairStatus.SAME]  # fmt: skip
        self.virtual_size = Size(self.scrollable_content_region.width, len(self.rows))
        target = 0
        if keep is not None and self.rows:
            target = next((n for n, k in enumerate(self.rows) if k >= keep), len(self.rows) - 1)
        self.cursor = target
        self.refresh()

    @property
    def current(self) -> int | None:
        """Index into pairs of the row under the cursor."""
        return self.rows[self.cursor] if 0 <= self.cursor < len(self.rows) else None

    def render_line(self, y: int) -> Strip:
        index = self.scroll_offset.y + y
        width = self.scrollable_content_region.width  # without the scrollbar
        if index >= len(self.rows):
            return Strip.blank(width)
        k = self.rows[index]
        return row_strip(k, self.pairs[k], width, index == self.cursor)

    def watch_cursor(self, old: int, new: int) -> None:
        self.refresh()
        self.scroll_to_region(Region(0, new, 1, 1), animate=False, immediate=True)
        self.screen.post_message(CursorMoved())

    def action_move(self, delta: int) -> None:
        if self.rows:
            self.cursor = max(0, min(len(self.rows) - 1, self.cursor + delta))

    def jump(self, forward: bool) -> bool:
        """Move to the next (or previous) differing row; False when there is none."""
        order = range(self.cursor + 1, len(self.rows)) if forward else range(self.cursor - 1, -1, -1)
        for n in order:
            if self.pairs[self.rows[n]].status is not PairStatus.SAME:
                self.cursor = n
                return True
        return False


def summary_text(report: DriftReport) -> Text:
    """The lines above the table: the two sides, the verdict, the first divergence, the cause."""
    text = Text()
    text.append("A ", style="bold red")
    text.append(f"{report.a.label}   ")
    text.append("B ", style="bold green")
    text.append(f"{report.b.label}\n")
    text.append_text(summary_line(report))
    if report.drift:
        for g in report.groups:
            if g.moved:
                text.append(f"   {g.buffer_type}: {g.kind.replace('_', ' ')}", style="yellow")
    text.append(f"\n{alignment_sentence(report)}", style="dim")
    if not report.drift:
        return text
    pair = report.pairs[report.first_divergence or 0]
    op = pair.a or pair.b
    assert op is not None
    text.append(f"\nFirst divergence: row {report.first_divergence}, {op.name} at {op.site}")
    sentence = cause_sentence(report) or other_op_sentence(report)
    if sentence:
        text.append("\nLikely cause: ", style="bold")
        text.append(sentence, style="red")
    return text


def detail_text(pair: OpPair | None) -> Text:
    if pair is None:
        return Text("")
    if pair.status is PairStatus.SAME:
        return Text(f"Same buffers; aligned as {MATCH_WORDS.get(pair.match, '?')}"
                    f"{_sites(pair)}.", style="dim")  # fmt: skip
    if pair.status is not PairStatus.CHANGED:
        side = "A" if pair.status is PairStatus.ONLY_A else "B"
        op = pair.a or pair.b
        return Text(f"Only in {side}: {op.name} at {op.site}, event {op.seq}",  # type: ignore[union-attr]
                    style="red" if side == "A" else "green")  # fmt: skip
    text = Text("   ".join(fmt_change(c) for c in pair.changes), style="yellow")
    text.append(f"\nAligned as {MATCH_WORDS.get(pair.match, '?')}{_sites(pair)}.", style="dim")
    return text


def _sites(pair: OpPair) -> str:
    """Both call sites, when the pair matched across different ones."""
    if pair.a is None or pair.b is None or pair.a.site == pair.b.site:
        return ""
    return f" (A {pair.a.site}, B {pair.b.site})"


class DiffScreen(Screen):
    """Capture `capture_a` of `path_a` against capture `capture_b` of `path_b` (or, with
    `prep=True`, capture `capture_a` of `path_a` against its own prep run)."""

    DEFAULT_CSS = """
    DiffScreen #diff-summary { padding: 0 1; height: auto; max-height: 8; }
    DiffScreen #diff-columns { padding: 0 0; color: $text-muted; }
    DiffScreen #diff-detail { padding: 0 1; height: 3; border-top: solid $primary-darken-2; }
    """
    HELP_TITLE = "Diff"
    HELP_WIDGETS = (AlignedOps,)
    BINDINGS = [
        Binding("n", "next_divergence", "Next diff"),
        Binding("p", "previous_divergence", "Prev diff"),
        Binding("f", "toggle_filter", "Only diffs"),
        Binding("a", "next_capture('a')", "Next capture A"),
        Binding("b", "next_capture('b')", "Next capture B"),
        Binding("escape", "back", "Back"),
    ]

    def __init__(self, path_a: str | Path, path_b: str | Path | None = None, capture_a: int = 1,
                 capture_b: int = 1, prep: bool = False) -> None:  # fmt: skip
        super().__init__()
        self.spec_a = CaptureSpec(str(path_a), capture_a)
        self.spec_b = None if prep else CaptureSpec(str(path_b or path_a), capture_b)
        self.report: DriftReport | None = None
        self.error: str | None = None
        self.captures = (0, 0)

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(Text("Diffing…", style="dim"), id="diff-summary")
        yield Static("", id="diff-columns")
        yield AlignedOps(id="diff-ops")
        yield Static("", id="diff-detail")
        yield KeyFooter()

    def on_mount(self) -> None:
        self.sub_title = "diff"
        self._compute(self.spec_a, self.spec_b)

    @work(thread=True, exclusive=True)
    def _compute(self, a: CaptureSpec, b: CaptureSpec | None) -> None:
        try:
            report = diff_targets(a, b)
            counts = [_capture_count(a.path), _capture_count((b or a).path)]
            self.post_message(DiffReady(report, captures=(counts[0], counts[1])))
        except TtrecordError as exc:
            self.post_message(DiffReady(None, str(exc)))

    def on_diff_ready(self, message: DiffReady) -> None:
        self.report, self.error, self.captures = message.report, message.error, message.captures
        summary = self.query_one("#diff-summary", Static)
        if self.report is None:
            summary.update(Text(f"Cannot diff: {self.error}", style="bold red"))
            return
        summary.update(summary_text(self.report))
        view = self.query_one(AlignedOps)
        side = max(10, (view.scrollable_content_region.width - INDEX_WIDTH - 3) // 2)
        name_w, site_w = (8, 13) if side - 1 < 50 else (11, 15)
        heading = f"{'event':<7}{'op':<{name_w + 1}}{'call site':<{site_w + 1}}"
        heading += "in → out" if len(heading) + 8 <= side else ""
        self.query_one("#diff-columns", Static).update(
            " " * INDEX_WIDTH + heading[:side].ljust(side) + "   " + heading[:side]
        )
        view.show(self.report.pairs, only_differences=False, keep=self.report.first_divergence)
        view.focus()

    def on_cursor_moved(self, message: CursorMoved) -> None:
        view = self.query_one(AlignedOps)
        current = view.current
        pair = view.pairs[current] if current is not None else None
        self.query_one("#diff-detail", Static).update(detail_text(pair))

    def action_next_divergence(self) -> None:
        if self.report is not None and not self.query_one(AlignedOps).jump(forward=True):
            self.notify("No further differences.")

    def action_previous_divergence(self) -> None:
        if self.report is not None and not self.query_one(AlignedOps).jump(forward=False):
            self.notify("No earlier differences.")

    def action_toggle_filter(self) -> None:
        if self.report is None:
            return
        view = self.query_one(AlignedOps)
        view.show(self.report.pairs, not view.only_differences, keep=view.current)

    def action_next_capture(self, side: str) -> None:
        """Diff the next capture of one side (wrapping to the first); with --prep, `a` moves
        both the prep run and its capture."""
        if self.report is None:
            return
        spec = self.spec_a if side == "a" else self.spec_b
        count = self.captures[0 if side == "a" else 1]
        if spec is None or count < 2:
            self.notify(f"{side.upper()} has no other capture.")
            return
        number = (spec.number or 1) % count + 1
        if side == "a":
            self.spec_a = CaptureSpec(spec.path, number)
        else:
            self.spec_b = CaptureSpec(spec.path, number)
        self.report = None
        self.query_one("#diff-summary", Static).update(Text("Diffing…", style="dim"))
        self._compute(self.spec_a, self.spec_b)

    def action_back(self) -> None:
        self.app.pop_screen()


def _capture_count(path: str) -> int:
    with Session.open(path) as session:
        return len(session.traces())
