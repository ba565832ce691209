"""Every screen fits an 80x24 and a 200x50 terminal: footer keys whole, `?` always there,
no number (sequence, count, address, line) cut by an ellipsis, and the numbers each screen is
for on it."""

import pytest
from textual.widgets import Input
from tui_pilot import settle, screen_text
from tui_screens import cut_numbers, footer_problems, footer_ready
from tui_sessions import H, OFFENDING_LINE, SCRIPT, build_alloc_after_capture

from ttrecord.tui.app import TtrecordApp
from ttrecord.tui.screens.diff import DiffScreen
from ttrecord.tui.screens.finding import FindingScreen
from ttrecord.tui.screens.help import HelpScreen
from ttrecord.tui.screens.memory import MemoryScreen
from ttrecord.tui.screens.op_detail import OpDetailScreen
from ttrecord.tui.screens.overview import OverviewScreen
from ttrecord.tui.screens.sessions import SessionsScreen
from ttrecord.tui.screens.timeline import TimelineScreen

pytestmark = pytest.mark.slow  # long in-process UI sweeps

# (keys from the sessions list, the screen reached, texts it must show whole)
WALK = [
    ((), SessionsScreen, ["alloc_after_capture.db", "22", "1 error", "⏎ Open"]),
    (("enter",), OverviewScreen, ["22 events", "TR004", f"{SCRIPT}:{OFFENDING_LINE}", "11–17",
                                  "⏎ Open", "p Diff prep"]),
    (("enter", "enter"), FindingScreen, [f"at {SCRIPT}:{OFFENDING_LINE}", "t Timeline"]),
    (("enter", "enter", "o"), OpDetailScreen, ["#19 from_torch", f"0x{H:x}", "2 KiB"]),
    (("enter", "t"), TimelineScreen, ["22 events", f"{SCRIPT}:4", "device_open", "⏎ Op detail", "esc Back"]),
    (("enter", "m"), MemoryScreen, ["0x100000", "seq 1", "22", "z Zoom in", "esc Back"]),
    (("enter", "m", "v"), MemoryScreen, [f"[0x{H:x}, 0x{H + 2048:x})", "n Next overlap", "esc Back"]),
    (("enter", "p"), DiffScreen, ["prep run", "matmul", "n Next diff", "esc Back"]),
    (("enter", "question_mark"), HelpScreen, ["Keys on this screen: Overview"]),
]


@pytest.mark.parametrize("size", [(80, 24), (200, 50)], ids=["80x24", "200x50"])
async def test_every_screen_fits_without_cut_keys_or_numbers(workdir, size):
    """GIVEN the alloc-after-capture session WHEN each screen is reached at 80x24 and at
    200x50 THEN its footer shows whole keys (and `?`), no number on it is cut, and the figures
    it exists to show are there whole."""
    build_alloc_after_capture(workdir)
    problems = []
    for keys, screen, expected in WALK:
        app = TtrecordApp(["."])
        async with app.run_test(size=size) as pilot:
            await settle(pilot)
            for key in keys:
                await pilot.press(key)
                await settle(pilot)
            assert isinstance(app.screen, screen), (keys, app.screen)
            if isinstance(app.focused, Input):
                app.screen.set_focus(None)
            if screen is not HelpScreen:
                await footer_ready(pilot)
            text = screen_text(app)
            where = f"{size} {'+'.join(keys) or 'start'}"
            if screen is not HelpScreen:  # the help is a modal over its screen's footer
                problems += [f"{where}: {p}" for p in footer_problems(app, text)]
            problems += [f"{where}: cut number in {line!r}" for line in cut_numbers(text)]
            problems += [f"{where}: {e!r} not on screen" for e in expected if e not in text]
    assert not problems, "\n".join(problems)
