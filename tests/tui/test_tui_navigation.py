"""Getting around: a finding's events open on the timeline, the command palette opens screens,
and a mouse click selects a timeline row."""

from tui_pilot import settle
from textual.widgets import DataTable

from ttrecord.tui.app import TtrecordApp
from ttrecord.tui.screens.finding import FindingScreen
from ttrecord.tui.screens.memory import MemoryScreen
from ttrecord.tui.screens.timeline import TimelineScreen
from ttrecord.tui.widgets.event_table import EventTable


async def test_related_event_opens_on_the_timeline(alloc_session):
    """GIVEN a finding WHEN its second related event is chosen with tab (to the events: the
    page itself has the focus), down, enter THEN the timeline opens with the cursor on that
    event."""
    app = TtrecordApp([str(alloc_session)])
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        finding = app.screen
        assert isinstance(finding, FindingScreen)
        wanted = finding.data.related[1].seq
        await pilot.press("tab", "down", "enter")
        await settle(pilot)
        assert isinstance(app.screen, TimelineScreen)
        table = app.screen.query_one(EventTable)
        assert table.row(table.cursor).seq == wanted


async def test_command_palette_opens_the_memory_map(alloc_session):
    """GIVEN the overview WHEN the palette is opened and 'Memory map' chosen THEN the memory
    map of that session opens."""
    app = TtrecordApp([str(alloc_session)])
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+p")
        await settle(pilot)
        await pilot.press(*"Memory map")
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, MemoryScreen)
        assert app.screen.path == alloc_session


async def test_click_selects_a_timeline_row(alloc_session):
    """GIVEN the timeline WHEN the fifth visible row is clicked THEN it becomes the cursor
    row."""
    app = TtrecordApp([str(alloc_session)])
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("t")
        await settle(pilot)
        table = app.screen.query_one(EventTable)
        await pilot.click(EventTable, offset=(10, 4))
        await settle(pilot)
        assert table.cursor == 4 and table.row(4).seq == 5
        assert not app.screen.query(DataTable)  # the timeline is the paged view, not a table
