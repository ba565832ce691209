"""`?` lists the keys of the current screen; ctrl+t switches between light and dark."""

from tui_pilot import settle, screen_text

from ttrecord.tui.app import DARK, LIGHT, TtrecordApp
from ttrecord.tui.screens.help import HelpScreen


async def test_help_lists_the_keys_of_the_screen_below(alloc_session):
    """GIVEN the overview WHEN ? is pressed THEN the help lists its keys (timeline, memory
    map) and escape closes it."""
    app = TtrecordApp([str(alloc_session)])
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("question_mark")
        await settle(pilot)
        assert isinstance(app.screen, HelpScreen)
        text = screen_text(app)
        assert "Timeline" in text and "Memory map" in text and "Command palette" in text
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
