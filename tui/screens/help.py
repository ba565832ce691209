"""`?`: the keys of the screen underneath and of the whole app, in one list."""

from __future__ import annotations

from rich.table import Table
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import Static

from ttrecord.tui.filters import FILTER_HELP

ABOUT = (
    "ttrecord shows every trace-capture hazard of a recorded ttnn run, pinned to the line that"
    " caused it. Phases: eager, prep (the run right before a capture), capture, replay."
)


def key_table(screen: Screen) -> Table:
    table = Table(box=None, show_header=False, padding=(0, 2))
    table.add_column(style="bold")
    table.add_column()
    seen: set[str] = set()
    for (_, binding, _enabled, _tooltip) in screen.active_bindings.values():
        if binding.description and binding.description not in seen:
            seen.add(binding.description)
            table.add_row(screen.app.get_key_display(binding), binding.description)
    table.add_row("ctrl+p", "Command palette")
    table.add_row("mouse", "click a row to select it, scroll with the wheel")
    return table


class HelpScreen(ModalScreen):
    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen VerticalScroll {
        width: 80; height: auto; max-height: 90%;
        border: thick $primary; background: $surface; padding: 1 2;
    }
    """
    BINDINGS = [Binding("escape,q,question_mark", "dismiss", "Close")]

    def __init__(self, under: Screen) -> None:
        super().__init__()
        self.under = under

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Static("[b]Keys on this screen[/b]")
            yield Static(key_table(self.under))
            yield Static(f"\n[b]Timeline filter[/b]\n{FILTER_HELP}")
            yield Static(f"\n{ABOUT}")
