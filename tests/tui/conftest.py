"""Fixtures for the UI tests: sessions on disk, a fixed clock and helpers to read the screen (in tui_pilot.py)."""

from __future__ import annotations

import asyncio
import inspect
import time

import pytest

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


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem):
    """Run `async def` tests on a fresh event loop (Textual's pilot is async)."""
    if inspect.iscoroutinefunction(pyfuncitem.obj):
        names = pyfuncitem._fixtureinfo.argnames
        asyncio.run(pyfuncitem.obj(**{n: pyfuncitem.funcargs[n] for n in names}))
        return True
    return None
