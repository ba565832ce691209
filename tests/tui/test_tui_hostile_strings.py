"""Session text is data on every screen (issue problem 6): markup in names is shown as typed,
`[/]` does not crash, escapes and bidi controls never reach the terminal."""

from __future__ import annotations

import pytest
from tui_pilot import settle, screen_text

from tests.reliability.hostile import FORBIDDEN, build_hostile
from ttrecord.tui.app import TtrecordApp

pytestmark = pytest.mark.slow  # long in-process UI sweeps

SCREENS = {
    "overview": [],
    "finding": ["enter"],
    "timeline": ["t"],
    "op-detail": ["t", "enter"],
    "memory": ["m"],
    "help": ["question_mark"],
}


def raw_screen(app) -> str:
    """The text of every segment the app would write to the terminal (before any export
    step that could drop control characters)."""
    update = app.screen._compositor.render_update(full=True, screen_stack=app._background_screens)
    return "".join(seg.text for line in update.strips for strip in line for seg in strip
                   if seg.control is None)  # fmt: skip


async def _show(paths, keys, size=(160, 50)):
    app = TtrecordApp([str(p) for p in paths])
    async with app.run_test(size=size) as pilot:  # re-raises anything the app raised
        await settle(pilot)
        for key in keys:
            await pilot.press(key)
            await settle(pilot)
        return screen_text(app) + raw_screen(app), app


@pytest.mark.parametrize("name", sorted(SCREENS))
async def test_screen_shows_hostile_text_as_data(workdir, name):
    """GIVEN a session full of hostile strings WHEN each screen shows it THEN no crash and no
    raw control or bidi character on screen."""
    path = build_hostile(workdir)
    text, _ = await _show([path], SCREENS[name])
    assert [c for c in FORBIDDEN if c in text] == []
    assert "Traceback" not in text


async def test_overview_shows_markup_literally(workdir):
    """GIVEN a script named with markup WHEN the overview shows it THEN as typed."""
    path = build_hostile(workdir)
    text, _ = await _show([path], [])
    assert "model[fast][b]" in text


async def test_sessions_list_with_an_action_in_a_folder_name(workdir):
    """GIVEN a folder named like a Textual action WHEN its sessions are listed and the row is
    clicked THEN the name is shown as typed and no action runs (the app is still up)."""
    folder = workdir / "[@click=app.quit]run[b]"
    folder.mkdir()
    build_hostile(folder, "a.db")
    build_hostile(folder, "b.db")
    app = TtrecordApp([str(folder)])
    async with app.run_test(size=(160, 40)) as pilot:
        await settle(pilot)
        text = screen_text(app) + raw_screen(app)
        await pilot.click(offset=(10, 1))
        await pilot.click(offset=(20, 4))
        await settle(pilot)
        assert app.is_running
    assert "[@click=app.quit]run[b]" in text
    assert [c for c in FORBIDDEN if c in text] == []


@pytest.mark.parametrize("name", ["overview", "timeline", "memory", "finding", "op-detail"])
async def test_file_name_with_an_escape_never_reaches_the_title(workdir, name):
    """GIVEN a session file whose name holds an OSC title sequence WHEN a screen names it in
    its title THEN the title holds it escaped (issue 36, failure 10: the terminal's title was
    rewritten)."""
    path = build_hostile(workdir)
    hostile = path.with_name("s\x1b]0;pwned\x07.db")
    path.rename(hostile)
    app = TtrecordApp([str(hostile)])
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(pilot)
        for key in SCREENS[name]:
            await pilot.press(key)
            await settle(pilot)
        title, sub_title = app.screen.title or "", app.screen.sub_title or ""
    assert "\x1b" not in title and "\x07" not in title, title
    assert "\x1b" not in sub_title and "\x07" not in sub_title, sub_title
    assert "pwned" in title or name == "help"
