"""Damaged session contents in the UI (issue problem 9): the screen shows the error, the app
stays up and `ttrecord tui` exits non-zero; a seeded fuzz over the main screens."""

from __future__ import annotations

import random
import shutil
import sqlite3

import pytest
from tui_pilot import settle, screen_text
from tui_sessions import build_alloc_after_capture

from tests.reliability.test_damaged_fuzz import mutate
from ttrecord.tui.app import TtrecordApp

pytestmark = pytest.mark.slow


async def _visit(path, keys):
    app = TtrecordApp([str(path)])
    async with app.run_test(size=(140, 40)) as pilot:  # re-raises anything the app raised
        await settle(pilot)
        for key in keys:
            await pilot.press(key)
            await settle(pilot)
        return screen_text(app), app.unreadable()


async def test_bad_json_is_shown_and_reported(workdir, alloc_session):
    """GIVEN a session whose session row's options are not JSON WHEN the overview opens THEN
    it says the session cannot be read and the app reports it as unreadable (exit 2)."""
    conn = sqlite3.connect(alloc_session)
    with conn:
        conn.execute("UPDATE session SET options = 'garbage{'")
    conn.close()
    text, errors = await _visit(alloc_session, [])
    assert "cannot be read" in " ".join(text.split())
    assert errors and "cannot be read" in errors[0]


@pytest.mark.parametrize("seed", range(12))
async def test_screens_survive_damaged_cells(workdir, seed):
    """GIVEN a session with 1-3 random bad cells (seeded) WHEN the overview, timeline and
    memory map open THEN the app does not crash."""
    source = build_alloc_after_capture(workdir, "orig.db")
    target = workdir / "s.db"
    shutil.copy(source, target)
    rng = random.Random(1000 + seed)
    mutate(target, rng, rng.randint(1, 3))
    for keys in ([], ["t"], ["m"], ["enter"]):
        await _visit(target, keys)
