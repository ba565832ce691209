"""A session written by a newer ttrecord (an event kind and columns this one does not know)
opens in the UI: its overview, its timeline and the event's detail, which shows the event as
"unknown kind X" (docs/schema.md, format policy)."""

import sys
from pathlib import Path

from tui_pilot import settle, screen_text

from ttrecord.store.reader import EventFilter, Session
from ttrecord.tui.app import TtrecordApp
from ttrecord.tui.screens.op_detail import OpDetailScreen
from ttrecord.tui.screens.timeline import TimelineScreen
from ttrecord.tui.widgets.event_table import EventTable, row_cells

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "store"))
from test_unknown_kinds import NEW_KIND, write_newer_session  # noqa: E402


async def test_the_ui_shows_an_unknown_kind(workdir):
    # GIVEN a session holding an event of an unknown kind and extra columns
    path = write_newer_session(workdir / "newer.db")
    with Session.open(path) as s:
        (frob,) = s.events(EventFilter(name="ttnn.frob"))
    app = TtrecordApp([str(path)])
    async with app.run_test(size=(140, 40)) as pilot:
        # WHEN opened THEN the overview lists its finding (not "damaged")
        await settle(pilot)
        overview = screen_text(app)
        # WHEN the timeline is opened THEN the event's row says its kind is unknown
        await pilot.press("t")
        await settle(pilot)
        assert isinstance(app.screen, TimelineScreen)
        table = app.screen.query_one(EventTable)
        rows = [table.row(i) for i in range(table.total)]
        timeline = screen_text(app)
        # WHEN the event's detail is opened THEN it says the same
        await app.push_screen(OpDetailScreen(path, frob.seq))
        await settle(pilot)
        detail = screen_text(app)
    assert "TR009" in overview and "damaged" not in overview
    assert [r.kind for r in rows if r is not None and r.name == "ttnn.frob"] == [NEW_KIND]
    (row,) = [r for r in rows if r is not None and r.name == "ttnn.frob"]
    assert f"unknown kind {NEW_KIND}" in row_cells(row)
    assert "unknown kind" in timeline  # (the kind column is narrow: the detail shows it whole)
    assert f"#{frob.seq} ttnn.frob  unknown kind {NEW_KIND}  eager" in detail
