"""The scaled memory map: cells count exactly the buffers that cover them (from SQL
aggregates of the window), zoom and pan move the window, hazards show in their cells."""

import pytest
import random

from tui_pilot import settle, screen_text
from tui_sessions import H, build_alloc_after_capture

from ttrecord.store.reader import Session, buffer_cells, map_extents
from ttrecord.testing import TILE_BYTES, SessionBuilder
from ttrecord.tui.address_grid import View, build_grid
from ttrecord.tui.app import TtrecordApp
from ttrecord.tui.screens.memory import MemoryScreen
from ttrecord.tui.widgets.address_map import HAZARD, AddressMapView

BASE = 0x100000


def _churn(path, seed=3):
    rng = random.Random(seed)
    b = SessionBuilder()
    b.open_device(line=1)
    live = []
    for _ in range(400):
        if live and rng.random() < 0.45:
            b.free(live.pop(rng.randrange(len(live))))
        else:
            size = TILE_BYTES * rng.choice((1, 2, 5))
            live.append(b.alloc(BASE + 0x100 * rng.randrange(200), size=size))
    b.write(path)


def test_cells_count_the_buffers_covering_them(tmp_path):
    """GIVEN 200-odd buffers reusing addresses WHEN a window is aggregated in SQL at several
    scales THEN every cell holds exactly the number of buffers whose address range and
    lifetime meet it (checked against every buffer, one by one)."""
    path = tmp_path / "churn.db"
    _churn(path)
    with Session.open(path) as s:
        (device, btype, n, lo, hi), = map_extents(s)
        last = s.seq_range()[1]
        buffers = [(b.buffer.address, b.buffer.end, b.alloc_seq, b.free_seq or last) for b in s.buffers()]
        assert n == len(buffers) and lo == min(b[0] for b in buffers) and hi == max(b[1] for b in buffers)
        for rows, cols, window in ((8, 30, (lo, hi, 1, last)), (17, 11, (lo + 0x2345, lo + 0x9000, 50, 300))):
            view = View(device, btype, window[0], window[1], window[2], window[3], rows, cols)
            grid = build_grid(view, buffer_cells(s, device, btype, view.addr_base, view.addr_step,
                                                 rows, view.seq_lo, view.seq_step, cols, last))  # fmt: skip
            for r in range(rows):
                a0, a1 = view.row_range(r)
                for c in range(view.used_cols):
                    s0, s1 = view.col_range(c)
                    s1 = min(s1, view.seq_hi)
                    want = sum(1 for (a, e, f, t) in buffers if a < a1 and a0 < e and f <= s1 and t >= s0)
                    assert grid.counts[r][c] == want, (rows, r, c)


def test_zoom_keeps_the_cursor_address_and_pan_stays_inside():
    """GIVEN a view of 1 MiB on 16 rows WHEN zoomed in around row 8 THEN the step is a quarter
    and row 8's address stays on screen; panning never leaves the map's addresses."""
    view = View(0, "DRAM", 0x100000, 0x200000, 1, 1000, 16, 50)
    assert view.addr_step == 0x10000
    center = view.row_range(8)[0]
    zoomed = view.zoom_addresses(0.25, 8, 0x100000, 0x200000)
    assert zoomed.addr_step == 0x4000
    assert zoomed.addr_base <= center < zoomed.addr_base + zoomed.rows * zoomed.addr_step
    far = zoomed.pan_addresses(10_000, 0x100000, 0x200000)
    assert far.addr_hi <= 0x200000 and far.addr_lo >= 0x100000
    assert zoomed.zoom_addresses(4, 8, 0x100000, 0x200000).addr_step == 0x10000


@pytest.mark.slow
async def test_keys_zoom_pan_and_show_the_hazard_in_red(workdir):
    """GIVEN the alloc-after-capture session WHEN its memory map opens THEN the scaled view
    has an address scale, the buffer allocated over trace memory is drawn in red in its cell,
    and z / x / pagedown change the rows' addresses."""
    build_alloc_after_capture(workdir)
    app = TtrecordApp(["alloc_after_capture.db"])
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("m")
        await settle(pilot)
        assert isinstance(app.screen, MemoryScreen)
        grid = app.screen.query_one(AddressMapView)
        view = grid.view
        assert view is not None and grid.settled
        labels = [line.split()[0] for line in screen_text(app).splitlines() if line.startswith("0x")]
        assert labels[:2] == [f"0x{view.addr_base:x}", f"0x{view.addr_base + view.addr_step:x}"]
        row, col = view.row_of(H), view.col_of(19)  # `scratch`, allocated at 18, used at 19
        strip = grid.render_line(row + 1)
        cell = strip.crop(grid.label_width + col * (grid.size.width - grid.label_width) // view.used_cols).crop(0, 1)
        assert any(seg.style and seg.style.bgcolor == HAZARD.bgcolor for seg in cell), cell
        step = view.addr_step
        await pilot.press("z")
        await settle(pilot)
        assert grid.view.addr_step <= step // 2
        await pilot.press("x")
        await settle(pilot)
        assert grid.view.addr_step == step
        await pilot.press("z", "z", "pagedown")
        await settle(pilot)
        assert grid.view.addr_lo > view.addr_lo
