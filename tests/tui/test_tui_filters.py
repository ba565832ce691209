"""The timeline's filter line turns words into an EventFilter, and says what it cannot use."""

import pytest
from tui_pilot import settle, screen_text
from textual.widgets import Input
from tui_sessions import build_decode_loop

from ttrecord.tui.app import TtrecordApp
from ttrecord.tui.filters import FilterError, parse_filter
from ttrecord.tui.screens.timeline import TimelineScreen
from ttrecord.tui.widgets.event_table import EventTable


def test_keys_and_free_text_map_to_filter_fields():
    """GIVEN a filter line with every key WHEN parsed THEN each lands in its field and the
    remaining words are the text search."""
    f = parse_filter("phase:capture,replay kind:op op:matmul device:1 trace:2 model.py relu")
    assert f.phases == {"capture", "replay"}
    assert f.kinds == {"op"}
    assert (f.name, f.device, f.trace, f.text) == ("matmul", 1, 2, "model.py relu")


@pytest.mark.parametrize(
    ("line", "message"),
    [("phase:warmup", "unknown phase warmup"), ("kind:opp", "unknown kind opp"),
     ("device:x", "device needs a number")],
)  # fmt: skip
def test_bad_words_raise_a_message(line, message):
    """GIVEN a word the filter cannot use WHEN parsed THEN the error says which and why."""
    with pytest.raises(FilterError, match=message):
        parse_filter(line)


async def test_bad_filter_is_reported_under_the_table_and_keeps_rows(workdir):
    """GIVEN the timeline WHEN an unknown phase is entered THEN the status line explains it
    and the rows shown stay as they were."""
    path = build_decode_loop(workdir, steps=5)
    app = TtrecordApp([str(path)])
    async with app.run_test(size=(120, 30)) as pilot:
        await app.push_screen(TimelineScreen(path))
        await settle(pilot)
        table = app.screen.query_one(EventTable)
        before = table.total
        await pilot.press("slash")
        app.screen.query_one(Input).value = "phase:warmup"
        await pilot.press("enter")
        await settle(pilot)
        assert "unknown phase warmup" in screen_text(app)
        assert table.total == before
