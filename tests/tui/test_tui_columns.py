"""Columns sized to content and fitted by priority: numbers whole, call sites cut from the
middle keeping file name and line, the least important columns giving way first."""

import pytest
from ttrecord.tui.columns import MIDDLE, NEVER, Column, fit, shorten_middle
from ttrecord.tui.widgets.event_table import columns_for, header_text


def test_call_sites_keep_file_name_and_line():
    """GIVEN a long path WHEN shortened from the middle THEN the directories go first, and a
    file name too long on its own keeps its start, extension and line."""
    assert shorten_middle("/home/me/models/llama/decoder_block.py:123", 30) == "/home/me/…decoder_block.py:123"
    short = shorten_middle("alloc_after_capture.py:18", 16)
    assert len(short) == 16 and short.endswith(".py:18") and short.startswith("alloc")
    assert shorten_middle("model.py:7", 20) == "model.py:7"


def test_numbers_never_shrink_and_optional_columns_give_way_whole():
    """GIVEN a table wider than the screen WHEN fitted THEN the low-priority text column
    shrinks to its minimum, an optional number column is left out, numbers keep their width."""
    cols = [Column("seq", 9, shorten=NEVER), Column("title", 1, min=8),
            Column("started", 2, shorten=NEVER, optional=True), Column("line", 5, min=12, shorten=MIDDLE)]
    widths = fit(cols, [7, 40, 19, 25], 60, gap=1)
    assert widths[0] == 7 and widths[2] == 0 and widths[3] == 25
    assert sum(w + 1 for w in widths if w) <= 60
    assert fit(cols, [7, 40, 19, 25], 200, gap=1) == [7, 40, 19, 25]


def test_seven_digit_seqs_have_their_column_at_80_and_200():
    """GIVEN a session whose last seq is 1,000,003 WHEN the timeline lays out its columns THEN
    the seq column holds seven digits and a space before the phase, at 80 and 200 columns, and
    the header fits the width."""
    for width in (80, 200):
        cols = columns_for(width, 1_000_003)
        assert cols[0][0].title == "seq" and cols[0][1] >= 7
        assert cols[1][0].title == "phase" and cols[1][1] >= len("capture")
        assert header_text(cols).index("phase") >= 8
        assert sum(w + 1 for _, w in cols) + 1 <= width
    titles = [c.title for c, _ in columns_for(200, 1_000_003)]
    assert {"op", "call site", "dur", "addresses"} <= set(titles)


class _FromAMillion(list):
    """An event list that numbers events from 999,995 (SessionBuilder numbers by length)."""

    def __len__(self) -> int:
        return super().__len__() + 999_994


@pytest.mark.slow
async def test_timeline_rows_of_seven_digit_seqs_stay_in_their_columns(workdir):
    """GIVEN a session whose seqs pass 1,000,000 WHEN its timeline shows at 80x24 and 200x50
    THEN every row's seq is whole and followed by a space, then its phase, under the header."""
    from tui_pilot import settle, screen_text

    from ttrecord.testing import SessionBuilder
    from ttrecord.tui.app import TtrecordApp

    b = SessionBuilder(file="decode.py")
    b.events = _FromAMillion()
    b.open_device(line=1)
    x = b.alloc(0x100000)
    for i in range(12):
        y = b.alloc(0x100800)
        b.op("ttnn.relu", [x], [y], line=10 + i)
        b.free(y)
    b.write(workdir / "big.db", script="decode.py")
    for size in ((80, 24), (200, 50)):
        app = TtrecordApp([str(workdir / "big.db")])
        async with app.run_test(size=size) as pilot:
            await settle(pilot)
            await pilot.press("t")
            await settle(pilot)
            lines = screen_text(app).splitlines()
        header = next(line for line in lines if line.lstrip().startswith("seq"))
        rows = [line for line in lines if line.startswith("▌")]
        assert rows and all(line[1:8].strip().isdigit() and line[8] == " " for line in rows), rows
        assert any(line[1:9] == "1000006 " for line in rows)
        assert header.index("phase") == rows[0].index("eager")
