"""The main screens look as reviewed: SVG snapshots at a fixed terminal size.

Update after an intended change with `pytest tests/tui/test_tui_snapshots.py --snapshot-update`
and review the SVGs in the report before committing them.
"""

import pytest
from tui_pilot import settle

from ttrecord.tui.app import TtrecordApp

SIZE = (120, 36)


def _keys(*keys):
    async def run_before(pilot) -> None:
        await settle(pilot)
        for key in keys:
            await pilot.press(key)
            await settle(pilot)

    return run_before


@pytest.mark.parametrize(
    ("name", "keys"),
    [
        ("sessions", ()),
        ("overview", ("enter",)),
        ("finding", ("enter", "enter")),
        ("memory_map", ("enter", "enter", "m")),
        ("timeline", ("enter", "t", "c")),
    ],
)
def test_main_screens(name, keys, alloc_session, snap_compare):
    """GIVEN the alloc-after-capture session in the current folder WHEN each main screen is
    reached with its keys THEN it renders exactly as the reviewed snapshot."""
    assert snap_compare(TtrecordApp(["."]), terminal_size=SIZE, run_before=_keys(*keys))
