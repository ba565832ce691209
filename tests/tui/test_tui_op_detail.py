"""Op detail shows a call's tensors with addresses, shapes, dtypes, layouts, memory configs."""

from tui_pilot import settle, screen_text
from tui_sessions import H, W, X

from ttrecord.store.reader import EventFilter, Session
from ttrecord.tui.app import TtrecordApp
from ttrecord.tui.screens.op_detail import OpDetailScreen


async def test_captured_matmul_lists_inputs_and_output(alloc_session):
    """GIVEN the captured matmul WHEN its detail opens THEN both inputs and the output are
    listed with their buffer addresses and tensor metadata."""
    with Session.open(alloc_session) as s:
        (matmul,) = s.events(EventFilter(phases=frozenset({"capture"}), name="matmul"))
    app = TtrecordApp([str(alloc_session)])
    async with app.run_test(size=(140, 40)) as pilot:
        await app.push_screen(OpDetailScreen(alloc_session, matmul.seq))
        await settle(pilot)
        text = screen_text(app)
    assert f"#{matmul.seq} ttnn.matmul  op  capture  trace 0  device 0" in text
    rows = [line.split() for line in text.splitlines() if line.split()[:1] in (["in"], ["out"])]
    assert [(r[0], r[-3]) for r in rows] == [("in", hex(X)), ("in", hex(W)), ("out", hex(H))]
    assert all(r[4:9] == ["32×32", "BFLOAT16", "TILE", "DRAM", "interleaved"] for r in rows)
