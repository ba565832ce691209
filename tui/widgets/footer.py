"""The footer: the keys that matter on this screen, as many as fit, never one cut in half.

Textual's Footer lists every shown binding in one row and lets the terminal's edge cut the
last ones; at 80 columns that was "esc Bac". This one keeps the screen's keys in the order the
screen declares them (most important first), then the app's, drops what does not fit, and
always keeps the way back (escape) and `?`, which lists every key (ttrecord.tui.screens.help).
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

HELP_ACTION = "help"


def key_width(key_display: str, description: str) -> int:
    """Cells a FooterKey takes: its key padded by one either side, then the description and
    one space (the non-compact FooterKey styles)."""
    return len(key_display) + 2 + (len(description) + 1 if description else 0)


class KeyFooter(Footer):
    """A Footer whose keys fit the width (see the module docstring)."""

    def __init__(self) -> None:
        super().__init__(show_command_palette=False)
        self._width = 0

    def shown(self, width: int) -> list[tuple[Binding, bool, str]]:
        """The bindings the footer shows at `width` columns, in the order shown."""
        seen: set[str] = set()
        screen_keys: list[tuple[Binding, bool, str]] = []
        app_keys: list[tuple[Binding, bool, str]] = []
        for node, binding, enabled, tooltip in self.screen.active_bindings.values():
            if not binding.show or binding.action in seen:
                continue
            seen.add(binding.action)
            (app_keys if node is self.app else screen_keys).append((binding, enabled, tooltip))
        ordered = screen_keys + app_keys
        # `?` and the way back always fit; the rest in order while they do.
        must = [t for t in ordered if t[0].action == HELP_ACTION or t[0].key == "escape"]
        used = sum(self._width_of(t[0]) for t in must)
        keep = []
        for item in ordered:
            if item in must:
                continue
            w = self._width_of(item[0])
            if used + w <= width:
                keep.append(item)
                used += w
        back = [t for t in must if t[0].action != HELP_ACTION]
        return keep + back + [t for t in must if t not in back]

    def _width_of(self, binding: Binding) -> int:
        return key_width(self.app.get_key_display(binding), binding.description)

    def compose(self) -> ComposeResult:
        if not self._bindings_ready:
            return
        self._width = self.size.width or self.app.size.width
        shown = self.shown(self._width)
        self.styles.grid_size_columns = max(1, len(shown))
        for binding, enabled, tooltip in shown:
            yield FooterKey(binding.key, self.app.get_key_display(binding), binding.description,
                            binding.action, disabled=not enabled, tooltip=tooltip).data_bind(compact=Footer.compact)  # fmt: skip

    def on_resize(self) -> None:
        if self.size.width != self._width:
            self.refresh(recompose=True)
