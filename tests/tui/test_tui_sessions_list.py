"""The sessions list: status with the call that died, and two sessions marked for a diff."""

import sqlite3
import sys
import types

from tui_pilot import settle, screen_text
from textual.screen import Screen
from tui_sessions import build_decode_loop, freeze_times

from ttrecord.events import SessionStatus
from ttrecord.tui.app import TtrecordApp
from ttrecord.tui.screens.sessions import DIFF_MODULE


async def test_crashed_session_names_the_call_that_died(workdir, alloc_session):
    """GIVEN a crashed session whose last call was execute_trace WHEN the folder is listed
    THEN its row says crashed in that call, with its line."""
    crashed = build_decode_loop(workdir, steps=3, name="crashed.db")
    freeze_times(crashed, SessionStatus.CRASHED)
    conn = sqlite3.connect(crashed)
    with conn:
        (seq,) = conn.execute("SELECT seq FROM events WHERE kind = 'trace_execute'").fetchone()
        conn.execute("UPDATE session SET last_call = ?", (seq,))
    conn.close()
    app = TtrecordApp([])
    async with app.run_test(size=(160, 20)) as pilot:
        await settle(pilot)
        text = screen_text(app)
    assert f"crashed in execute_trace at decode.py:11 (#{seq})" in text
    assert "alloc_after_capture.db" in text and "1 error" in text


async def test_two_marked_sessions_open_the_diff_screen(workdir, alloc_session, monkeypatch):
    """GIVEN a diff screen module WHEN two sessions are marked with space and d is pressed
    THEN the diff screen is built from the two marked paths."""
    build_decode_loop(workdir, steps=3)
    opened = []

    class DiffScreen(Screen):
        def __init__(self, a, b):
            super().__init__()
            opened.append((a.name, b.name))

    module = types.ModuleType(DIFF_MODULE)
    module.DiffScreen = DiffScreen
    monkeypatch.setitem(sys.modules, DIFF_MODULE, module)
    app = TtrecordApp([])
    async with app.run_test(size=(160, 20)) as pilot:
        await settle(pilot)
        await pilot.press("space", "down", "space", "d")
        await settle(pilot)
        assert isinstance(app.screen, DiffScreen)
    assert sorted(opened[0]) == ["alloc_after_capture.db", "decode.db"]


async def test_diff_needs_two_marked_sessions(workdir, alloc_session):
    """GIVEN one marked session WHEN d is pressed THEN the user is told to mark two."""
    app = TtrecordApp([])
    async with app.run_test(size=(160, 20)) as pilot:
        await settle(pilot)
        await pilot.press("space", "d")
        await settle(pilot)
        assert any("Mark two sessions" in n.message for n in app._notifications)
