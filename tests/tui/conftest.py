"""Fixtures for the UI tests: sessions on disk, a fixed clock and helpers to read the screen."""

from __future__ import annotations

import asyncio
import inspect
import io
import time

import pytest
from rich.console import Console

from tui_sessions import build_alloc_after_capture


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    """Run in a fresh folder (sources resolve relative to it) with times shown in UTC."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield tmp_path
    monkeypatch.undo()
    time.tzset()


@pytest.fixture
def alloc_session(workdir):
    return build_alloc_after_capture(workdir)


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


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem):
    """Run `async def` tests on a fresh event loop (Textual's pilot is async)."""
    if inspect.iscoroutinefunction(pyfuncitem.obj):
        names = pyfuncitem._fixtureinfo.argnames
        asyncio.run(pyfuncitem.obj(**{n: pyfuncitem.funcargs[n] for n in names}))
        return True
    return None
