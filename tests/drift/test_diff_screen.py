"""The diff screen: aligned ops side by side, changed buffers highlighted, jumps to diffs."""

import pytest
import asyncio

from textual.app import App

from drift_programs import one_capture
from ttrecord.tui.screens.diff import CHANGED, AlignedOps, DiffScreen


class _Host(App):
    def __init__(self, screen: DiffScreen) -> None:
        super().__init__()
        self._diff = screen

    def on_mount(self) -> None:
        self.push_screen(self._diff)


async def _settle(pilot) -> None:
    for _ in range(5):
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()


def _plain(strip) -> str:
    return "".join(seg.text for seg in strip)


def test_screen_shows_the_cause_highlights_changed_cells_and_filters(tmp_path):
    """GIVEN A with the inserted add/removed relu and B with an extra allocation at line 30
    WHEN the diff screen opens
    THEN the summary names the first divergence and the line-30 allocation, the cursor starts
    on the first divergent row, its changed address is highlighted on both sides, `n` moves to
    the next difference, and `f` hides the matching rows."""
    a = one_capture(tmp_path / "a.db")
    b = one_capture(tmp_path / "b.db", extra_alloc=True)

    async def scenario() -> None:
        app = _Host(DiffScreen(a, b))
        async with app.run_test(size=(150, 30)) as pilot:
            await _settle(pilot)
            screen = app.screen
            assert isinstance(screen, DiffScreen) and screen.report is not None
            summary = str(screen.query_one("#diff-summary").render())
            assert "First divergence: row 0, ttnn.matmul at model.py:10" in summary
            assert "model.py:30 (ttnn.zeros)" in summary
            view = screen.query_one(AlignedOps)
            assert len(view.rows) == 3 and view.current == 0
            line = view.render_line(0)
            highlighted = [seg.text for seg in line if seg.style and seg.style.bgcolor
                           and seg.style.bgcolor == CHANGED.bgcolor]  # fmt: skip
            assert highlighted == ["0x101000", "0x101800"]  # matmul out0 in A and in B
            assert "ttnn.matmul" not in _plain(line) and "matmul" in _plain(line)
            detail = str(screen.query_one("#diff-detail").render())
            assert "out0 address 0x101000 → 0x101800" in detail
            await pilot.press("n")
            assert view.current == 1
            await pilot.press("f")
            await pilot.pause()
            statuses = [str(view.pairs[k].status) for k in view.rows]
            assert "same" not in statuses and view.only_differences
            await pilot.press("escape")
            assert not isinstance(app.screen, DiffScreen)

    asyncio.run(scenario())


def test_unreadable_input_is_shown_not_raised(tmp_path):
    """GIVEN a path that does not exist WHEN the diff screen opens
    THEN it says why in one line instead of crashing."""
    a = one_capture(tmp_path / "a.db")

    async def scenario() -> None:
        app = _Host(DiffScreen(a, tmp_path / "missing.db"))
        async with app.run_test(size=(120, 24)) as pilot:
            await _settle(pilot)
            summary = str(app.screen.query_one("#diff-summary").render())
            assert "Cannot diff:" in summary and "missing.db: no such file" in summary

    asyncio.run(scenario())


def test_marking_two_sessions_and_pressing_d_opens_the_real_diff(tmp_path):
    """GIVEN the app listing two sessions WHEN both are marked (space) and d is pressed
    THEN this diff screen opens on those two files and shows their drift."""
    from ttrecord.tui.app import TtrecordApp

    a = one_capture(tmp_path / "a.db")
    b = one_capture(tmp_path / "b.db", extra_alloc=True)

    async def scenario() -> None:
        app = TtrecordApp([a, b])
        async with app.run_test(size=(150, 30)) as pilot:
            await _settle(pilot)
            await pilot.press("space", "down", "space", "d")
            await _settle(pilot)
            screen = app.screen
            assert isinstance(screen, DiffScreen) and screen.report is not None
            assert {screen.report.a.path, screen.report.b.path} == {a, b}
            assert screen.report.drift and screen.report.cause is not None

    asyncio.run(scenario())


def test_a_and_b_step_through_the_captures_of_each_side(tmp_path):
    """GIVEN one session with two captures, the second after an extra allocation, opened as
    capture 1 against capture 1 WHEN `b` is pressed THEN B becomes capture 2 and the drift and
    its line-30 cause appear; pressing `b` again wraps back to capture 1 and no drift."""
    from drift_programs import two_captures

    path = two_captures(tmp_path / "s.db", extra_before_second=True)

    async def scenario() -> None:
        app = _Host(DiffScreen(path, path))
        async with app.run_test(size=(150, 30)) as pilot:
            await _settle(pilot)
            screen = app.screen
            assert not screen.report.drift and screen.captures == (2, 2)
            await pilot.press("b")
            await _settle(pilot)
            assert (screen.report.a.number, screen.report.b.number) == (1, 2)
            assert screen.report.drift and screen.report.cause.difference.live.line == 30
            await pilot.press("b")
            await _settle(pilot)
            assert screen.report.b.number == 1 and not screen.report.drift

    asyncio.run(scenario())


@pytest.mark.slow
def test_the_overview_opens_a_diff_of_its_captures_and_of_its_prep_run(tmp_path):
    """GIVEN the app on one session with two captures, the second after an extra allocation
    WHEN `d` is pressed on its overview THEN capture 1 is diffed with capture 2 of the same
    session, with the line-30 cause; WHEN, back on the overview, `p` is pressed THEN capture 1
    is diffed with its own prep run."""
    from drift_programs import two_captures
    from ttrecord.tui.app import TtrecordApp
    from ttrecord.tui.screens.overview import OverviewScreen

    path = two_captures(tmp_path / "s.db", extra_before_second=True)

    async def scenario() -> None:
        app = TtrecordApp([path])
        async with app.run_test(size=(150, 30)) as pilot:
            await _settle(pilot)
            assert isinstance(app.screen, OverviewScreen)
            await pilot.press("d")
            await _settle(pilot)
            screen = app.screen
            assert isinstance(screen, DiffScreen) and screen.report is not None
            report = screen.report
            assert (report.a.path, report.b.path) == (path, path)
            assert (report.a.number, report.b.number, report.mode) == (1, 2, "captures")
            assert report.cause is not None and report.cause.difference.live.line == 30
            await pilot.press("escape")
            await _settle(pilot)
            assert isinstance(app.screen, OverviewScreen)
            await pilot.press("p")
            await _settle(pilot)
            report = app.screen.report
            assert report is not None and report.mode == "prep" and report.a.prep
            assert (report.a.number, report.b.number) == (1, 1) and not report.drift

    asyncio.run(scenario())
