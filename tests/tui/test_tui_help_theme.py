"""`?` lists the keys of the current screen; ctrl+t switches between light and dark."""

import pytest
from tui_pilot import settle, screen_text

from ttrecord.tui.app import DARK, LIGHT, TtrecordApp
from ttrecord.tui.screens.help import HelpScreen


@pytest.mark.slow
async def test_help_lists_ttrecords_keys_by_screen(alloc_session):
    """GIVEN the overview WHEN ? is pressed THEN the help lists the overview's own keys first
    (enter, timeline, memory map, both diffs), then the keys of every other screen, without
    Textual's generic table keys and without listing quit or the palette twice; escape closes it."""
    app = TtrecordApp([str(alloc_session)])
    async with app.run_test(size=(100, 200)) as pilot:
        await settle(pilot)
        await pilot.press("question_mark")
        await settle(pilot)
        assert isinstance(app.screen, HelpScreen)
        lines = [" ".join(line.strip("█ ").split()) for line in screen_text(app).splitlines()]
        start = lines.index("Keys on this screen: Overview")
        assert lines[start + 1 : start + 7] == [
            "⏎ Open", "t Timeline", "m Memory", "d Diff captures", "p Diff prep", "esc Back"
        ]
        for heading in ("Sessions", "Finding", "Timeline", "Op detail", "Memory map", "Diff"):
            assert heading in lines
        assert "n Next overlap" in lines and "z Zoom in" in lines  # a widget's keys, with its screen
        text = "\n".join(lines)
        for generic in ("Cursor left", "Page Left", "Copy selected", "Focus Next", "^q"):
            assert generic not in text
        assert text.count("Command palette") == 1 and text.count("Quit") == 1
        await pilot.press("escape")
        assert not isinstance(app.screen, HelpScreen)


async def test_ctrl_t_toggles_the_theme(alloc_session):
    """GIVEN the dark theme WHEN ctrl+t is pressed twice THEN it goes light, then dark."""
    app = TtrecordApp([str(alloc_session)])
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert app.theme == DARK
        await pilot.press("ctrl+t")
        assert app.theme == LIGHT
        await pilot.press("ctrl+t")
        assert app.theme == DARK
