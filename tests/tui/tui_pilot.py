"""Pilot helpers shared by the UI tests (a module of its own: `conftest` names collide)."""

from __future__ import annotations

import asyncio
import io
import time

from rich.console import Console


async def settle(pilot, timeout: float = 20.0) -> None:
    """Wait until the screen says everything it shows is in and no worker is running, then
    let one repaint happen. Screens set `settled`; a screen without it counts as settled."""
    app = pilot.app
    deadline = time.monotonic() + timeout
    calm = 0
    while calm < 2 and time.monotonic() < deadline:
        await pilot._wait_for_screen()
        await asyncio.sleep(0.002)
        busy = any(w.is_running for w in app.workers) or not getattr(app.screen, "settled", True)
        calm = 0 if busy else calm + 1
    await pilot.pause()


def screen_text(app) -> str:
    """What the terminal shows right now, as plain text."""
    width, height = app.size
    console = Console(width=width, height=height, file=io.StringIO(), record=True,
                      force_terminal=True, legacy_windows=False)  # fmt: skip
    console.print(app.screen._compositor.render_update(full=True, screen_stack=app._background_screens))
    return console.export_text()
