"""Columns sized to content and fitted by priority: numbers whole, call sites cut from the
middle keeping file name and line, the least important columns giving way first."""

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
