"""`?`: ttrecord's keys, screen by screen, the one underneath first.

The keys come from the screens' and ttrecord's own widgets' BINDINGS (so help and footer never
disagree), not from Textual's active bindings: those add the generic table keys (cursor left,
page right, copy, focus next) and list quit and the palette twice.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable

from rich.table import Table
from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import Static

from ttrecord.tui.filters import FILTER_HELP

ABOUT = (
    "ttrecord shows every trace-capture hazard of a recorded ttnn run, pinned to the line that"
    " caused it. Phases: eager, prep (the run right before a capture), capture, replay."
)
# Every screen with keys, in the order a user meets them: "module:Class".
SCREENS = (
    "sessions:SessionsScreen", "overview:OverviewScreen", "finding:FindingScreen",
    "timeline:TimelineScreen", "op_detail:OpDetailScreen", "memory:MemoryScreen",
    "diff:DiffScreen",
)  # fmt: skip
EVERYWHERE = (("q", "Quit"), ("?", "These keys"), ("ctrl+t", "Light/dark theme"),
              ("ctrl+p", "Command palette (open any screen of the session)"),
              ("mouse", "click a row to select it, scroll with the wheel"))  # fmt: skip


def screen_classes() -> list[type[Screen]]:
    out = []
    for spec in SCREENS:
        module, name = spec.split(":")
        out.append(getattr(importlib.import_module(f"ttrecord.tui.screens.{module}"), name))
    return out


def _bindings(items: Iterable[BindingType]) -> list[Binding]:
    return [b if isinstance(b, Binding) else Binding(*b) for b in items]


def screen_keys(app: App, cls: type) -> list[tuple[str, str]]:
    """(keys, what they do) of a screen class and the ttrecord widgets it declares in
    HELP_WIDGETS; one line per action, every key of it on that line."""
    rows: dict[str, tuple[list[str], str]] = {}
    for owner in (cls, *getattr(cls, "HELP_WIDGETS", ())):
        for binding in _bindings(owner.__dict__.get("BINDINGS", [])):
            if not binding.description:
                continue
            keys = [app.get_key_display(Binding(k.strip(), binding.action)) for k in binding.key.split(",")]
            shown_keys, _ = rows.setdefault(binding.description, ([], binding.description))
            shown_keys += [k for k in keys if k not in shown_keys]
    return [(" ".join(keys), what) for keys, what in rows.values()]


def key_table(app: App, keys: list[tuple[str, str]]) -> Table:
    table = Table(box=None, show_header=False, padding=(0, 2), pad_edge=False)
    table.add_column(style="bold", no_wrap=True)
    table.add_column()
    for key, what in keys:
        table.add_row(Text(key), Text(what))
    return table


def title_of(cls: type) -> str:
    return getattr(cls, "HELP_TITLE", cls.__name__.removesuffix("Screen"))


class HelpScreen(ModalScreen):
    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen VerticalScroll {
        width: 80; max-width: 100%; height: auto; max-height: 100%;
        border: thick $primary; background: $surface; padding: 0 1;
    }
    HelpScreen .heading { text-style: bold; color: $accent; padding: 1 0 0 0; }
    """
    BINDINGS = [Binding("escape,q,question_mark", "dismiss", "Close")]

    def __init__(self, under: Screen) -> None:
        super().__init__()
        self.under = under

    def compose(self) -> ComposeResult:
        app = self.under.app
        here = type(self.under)
        others = [c for c in screen_classes() if c is not here]
        with VerticalScroll():
            if here in screen_classes():
                yield Static(f"Keys on this screen: {title_of(here)}", classes="heading")
                yield Static(key_table(app, screen_keys(app, here)))
            yield Static("Everywhere", classes="heading")
            yield Static(key_table(app, list(EVERYWHERE)))
            for cls in others:
                yield Static(title_of(cls), classes="heading")
                yield Static(key_table(app, screen_keys(app, cls)))
            yield Static("Timeline filter", classes="heading")
            yield Static(Text(FILTER_HELP))
            yield Static(Text(f"\n{ABOUT}"))
