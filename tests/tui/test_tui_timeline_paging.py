"""The timeline pages rows from SQLite: only pages near the view are ever held."""

from tui_pilot import settle, screen_text
from textual.widgets import Input
from tui_sessions import build_decode_loop

from ttrecord.store.reader import Session
from ttrecord.tui.app import TtrecordApp
from ttrecord.tui.screens.timeline import TimelineScreen
from ttrecord.tui.widgets.event_table import PAGE, EventTable


async def _timeline(app, pilot, **kwargs) -> EventTable:
    await app.push_screen(TimelineScreen(app.paths[0], **kwargs))
    await settle(pilot)
    return app.screen.query_one(EventTable)


async def test_end_shows_the_last_event_without_loading_the_rest(workdir):
    """GIVEN a session of thousands of events WHEN the timeline opens and End is pressed
    THEN the last event is under the cursor and only a few pages are in memory."""
    path = build_decode_loop(workdir, steps=400)
    with Session.open(path) as s:
        total = s.event_count()
        last = s.timeline(limit=1, offset=total - 1)[0]
    app = TtrecordApp([str(path)])
    async with app.run_test(size=(120, 30)) as pilot:
        table = await _timeline(app, pilot)
        assert table.total == total > 10 * PAGE
        assert table.row(0).seq == 1
        await pilot.press("end")
        await settle(pilot)
        assert table.cursor == total - 1
        assert table.row(table.cursor).seq == last.seq
        assert f"▌{last.seq} " in screen_text(app)  # the seq column is as wide as its digits
        assert len(table._pages) <= 6 < total // PAGE


async def test_filter_line_shows_only_matching_events(workdir):
    """GIVEN the timeline WHEN `phase:capture kind:op` is entered THEN every row shown is a
    captured op and the count says how many."""
    path = build_decode_loop(workdir, steps=50)
    app = TtrecordApp([str(path)])
    async with app.run_test(size=(120, 30)) as pilot:
        table = await _timeline(app, pilot)
        await pilot.press("slash")
        app.screen.query_one(Input).value = "phase:capture kind:op"
        await pilot.press("enter")
        await settle(pilot)
        rows = [table.row(i) for i in range(table.total)]
        assert [(r.phase, r.kind, r.name) for r in rows] == [
            ("capture", "op", "ttnn.matmul"), ("capture", "op", "ttnn.relu")
        ]
        assert "2 matching events" in screen_text(app)


async def test_jump_puts_the_cursor_on_the_event(workdir):
    """GIVEN a seq deep in the session WHEN the timeline opens to jump there THEN the cursor
    row is that event and it is on screen."""
    path = build_decode_loop(workdir, steps=400)
    app = TtrecordApp([str(path)])
    async with app.run_test(size=(120, 30)) as pilot:
        table = await _timeline(app, pilot, jump_seq=1234)
        assert table.row(table.cursor).seq == 1234
        top = table.scroll_offset.y
        assert top <= table.cursor < top + table.size.height
