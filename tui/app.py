"""The ttrecord Textual app: a stack of screens over one or more session files."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.screen import Screen

from ttrecord.store.reader import find_sessions
from ttrecord.tui.handle import SessionHandle
from ttrecord.tui.screens.help import HelpScreen
from ttrecord.tui.screens.sessions import SessionsScreen

DARK, LIGHT = "textual-dark", "textual-light"


def resolve(paths: Iterable[str | os.PathLike[str]]) -> tuple[list[Path], str]:
    """Session files to list: files as given (bad ones show their error), folders scanned."""
    files: list[Path] = []
    folders: list[Path] = []
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            folders.append(p)
            files.extend(find_sessions(p))
        else:
            files.append(p)
    if not files and not folders:
        folders.append(Path.cwd())
        files.extend(find_sessions(Path.cwd()))
    note = "in " + ", ".join(str(f) for f in folders) if folders else ""
    return files, note


class TtrecordApp(App):
    CSS_PATH = "ttrecord.tcss"
    TITLE = "ttrecord"
    BINDINGS = [
        Binding("q", "quit", "Quit"),
        Binding("question_mark", "help", "Keys"),
        Binding("ctrl+t", "toggle_theme", "Light/dark theme", show=False),
    ]

    def __init__(self, paths: Iterable[str | os.PathLike[str]] = (), theme: str = DARK) -> None:
        super().__init__()
        self.paths = list(paths)
        self.initial_theme = theme
        self._handles: dict[Path, SessionHandle] = {}

    def handle(self, path: Path) -> SessionHandle:
        """The shared reader of one session file (opened on first query)."""
        key = Path(path).resolve()
        if key not in self._handles:
            self._handles[key] = SessionHandle(key)
        return self._handles[key]

    def on_mount(self) -> None:
        self.theme = self.initial_theme
        files, note = resolve(self.paths)
        self.push_screen(SessionsScreen(files, note))
        single_file = len(self.paths) == 1 and not Path(self.paths[0]).is_dir()
        if single_file:
            from ttrecord.tui.screens.overview import OverviewScreen

            self.push_screen(OverviewScreen(files[0]))

    def unreadable(self) -> list[str]:
        """Errors shown for sessions that could not be read (damaged, foreign, missing)."""
        errors = [e for h in self._handles.values() for e in h.errors]
        for screen in self.screen_stack:
            errors += [s.error for s in getattr(screen, "summaries", []) if s.error]
        return errors

    def on_unmount(self) -> None:
        for handle in self._handles.values():
            handle.close()

    def action_help(self) -> None:
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(self.screen))

    def action_toggle_theme(self) -> None:
        self.theme = LIGHT if self.theme == DARK else DARK

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        yield SystemCommand("Light/dark theme", "Switch between the light and dark theme",
                            self.action_toggle_theme)  # fmt: skip
        yield SystemCommand("Help", "Show the keys of this screen", self.action_help)
        path = getattr(screen, "path", None)
        if path is not None:
            from ttrecord.tui.screens.memory import MemoryScreen
            from ttrecord.tui.screens.overview import OverviewScreen
            from ttrecord.tui.screens.timeline import TimelineScreen

            for name, cls in (("Overview", OverviewScreen), ("Timeline", TimelineScreen),
                              ("Memory map", MemoryScreen)):  # fmt: skip
                yield SystemCommand(name, f"Open the {name.lower()} of {path.name}",
                                    lambda cls=cls: self.push_screen(cls(path)))  # fmt: skip
            yield SystemCommand(
                "Timeline: capture only", "Events recorded inside trace capture",
                lambda: self.push_screen(TimelineScreen(path, filt="phase:capture")),
            )  # fmt: skip
