"""From `ttrecord tui` on the alloc-after-capture session, three keystrokes reach the
overlapping addresses and the offending line."""

from tui_pilot import settle, screen_text
from tui_sessions import H, OFFENDING_LINE, SCRIPT
from textual.widgets import Static

from ttrecord.tui.app import TtrecordApp
from ttrecord.tui.memlayout import MapBar
from ttrecord.tui.screens.finding import FindingScreen
from ttrecord.tui.screens.memory import MemoryScreen
from ttrecord.tui.widgets.memory_map import MemoryMapView

OVERLAP = f"[0x{H:x}, 0x{H + 2048:x})"


async def test_three_keystrokes_from_the_folder_reach_line_and_addresses(alloc_session):
    """GIVEN the session in the current folder WHEN `ttrecord tui` runs with no arguments and
    the user presses enter, enter, m THEN the finding shows the offending line highlighted
    and both overlapping ranges, and the memory map selects the buffer that overlaps."""
    app = TtrecordApp([])
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("enter")  # 1: open the session (its findings list has focus)
        await settle(pilot)
        await pilot.press("enter")  # 2: open the most severe finding
        await settle(pilot)
        assert isinstance(app.screen, FindingScreen)
        text = screen_text(app)
        assert f"Source  {SCRIPT}:{OFFENDING_LINE}" in text
        assert f"❱ {OFFENDING_LINE} scratch = ttnn.from_torch" in text
        assert f"allocated: {OVERLAP} DRAM" in text
        lines = [line.strip() for line in text.splitlines()]
        assert lines[lines.index("trace_ranges:") + 1].startswith(f"{OVERLAP} DRAM")
        syntax = app.screen.query_one("#source", Static).content
        assert syntax.highlight_lines == {OFFENDING_LINE}

        await pilot.press("m")  # 3: the memory map, on the buffer allocated over the trace
        await settle(pilot)
        assert isinstance(app.screen, MemoryScreen)
        selected = app.screen.query_one(MemoryMapView).selected
        assert isinstance(selected, MapBar) and selected.hazards
        assert selected.address == H
        text = screen_text(app)
        assert f"! trace 0 writes {OVERLAP}" in text
        assert f"on {OVERLAP}: replay overwrites it" in text
        assert f"! {OVERLAP}" in text


async def test_one_session_given_opens_on_its_overview(alloc_session):
    """GIVEN one session file on the command line WHEN one key (enter) is pressed THEN the
    finding with its line is on screen."""
    app = TtrecordApp([str(alloc_session)])
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert "TR004" in screen_text(app)
        await pilot.press("enter")
        await settle(pilot)
        assert f"{SCRIPT}:{OFFENDING_LINE}" in screen_text(app)


async def test_two_keystrokes_show_line_and_addresses_on_an_80x24_terminal(alloc_session):
    """GIVEN a standard 80x24 terminal WHEN enter, enter are pressed from the folder THEN the
    finding's line, the highlighted source line and the overlapping range all fit on screen
    without scrolling."""
    app = TtrecordApp([])
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        text = screen_text(app)
    assert f"at {SCRIPT}:{OFFENDING_LINE}" in text
    assert f"❱ {OFFENDING_LINE} scratch = ttnn.from_torch" in text
    assert f"allocated: {OVERLAP} DRAM" in text
