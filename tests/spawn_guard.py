"""Tests are marked by what they do: a test that starts a process (a `ttrecord run` or another
interpreter, a browser, a pytester session, any subprocess) carries the `spawns` marker, and the
fast lane (`scripts/test --fast`) leaves those out. The marker is not a promise kept by hand: a
test without it that starts a process fails, naming what it started.

A test is marked by `pytestmark = pytest.mark.spawns` in its module, `@pytest.mark.spawns`, or
by asking for a fixture that starts processes (`SPAWNING_FIXTURES`). `slow` marks tests that
start nothing but take long in-process; the fast lane leaves them out too.
"""

from __future__ import annotations

import os
import subprocess
import threading
from pathlib import Path
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

# Fixtures that start processes for the tests that ask for them: the recorded samples (one
# `python samples/x.py` each, once per run), pytester, headless Chromium.
SPAWNING_FIXTURES = {"sample_cache", "samples", "pytester", "testdir", "chromium"}
_STARTED = pytest.StashKey[list[str]]()


class UnmarkedSpawn(AssertionError):
    """A test without the `spawns` marker started a process."""


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "spawns: starts a process (an interpreter, a browser, pytester); left out of"
        " the fast lane")  # fmt: skip
    config.addinivalue_line("markers", "slow: long in-process work; left out of the fast lane")
    if not config.pluginmanager.has_plugin("pytester"):  # (tests/test_spawn_guard.py)
        config.pluginmanager.import_plugin("pytester")


LANE = Path(__file__).resolve().parent / "realttnn"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        # the real-ttnn lane runs ttnn in child interpreters by design (tests/realttnn)
        if SPAWNING_FIXTURES & set(getattr(item, "fixturenames", ())) or LANE in Path(item.path).parents:
            item.add_marker(pytest.mark.spawns)


@contextmanager
def _no_processes(started: list[str]) -> Iterator[None]:
    """Starting a process from the test's thread raises (and is remembered, in case the code
    under test swallows it). Other threads go on as before: a session fixture's background
    recordings (tests/recorder/conftest.py `samples`) are not the running test's."""
    test_thread = threading.get_ident()

    def refuse(what: str, original: Any) -> Any:
        def refused(*args: Any, **kwargs: Any) -> Any:
            if threading.get_ident() != test_thread:
                return original(*args, **kwargs)
            shown = args[1] if what == "subprocess" and len(args) > 1 else args[:1]
            started.append(f"{what} {shown!r}"[:200])
            raise UnmarkedSpawn(f"this test starts a process ({started[-1]}): mark it"
                                " `@pytest.mark.spawns` (tests/spawn_guard.py)")  # fmt: skip

        return refused

    patches: list[tuple[Any, str, Any]] = [
        (subprocess.Popen, "_execute_child", refuse("subprocess", subprocess.Popen._execute_child))  # type: ignore[attr-defined]
    ]
    for name in ("fork", "forkpty", "posix_spawn", "posix_spawnp", "system", "execv", "execve"):
        if hasattr(os, name):
            patches.append((os, name, refuse(f"os.{name}", getattr(os, name))))
    saved = [(owner, name, getattr(owner, name)) for owner, name, _ in patches]
    for owner, name, replacement in patches:
        setattr(owner, name, replacement)
    try:
        yield
    finally:
        for owner, name, original in saved:
            setattr(owner, name, original)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    if item.get_closest_marker("spawns") is not None:
        yield
        return
    started = item.stash.setdefault(_STARTED, [])
    with _no_processes(started):
        yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    outcome = yield
    report: pytest.TestReport = outcome.get_result()
    started = item.stash.get(_STARTED, [])
    if started and report.passed and report.when == "call":  # caught, then swallowed: still fails
        report.outcome = "failed"
        report.longrepr = (f"{item.nodeid} starts a process ({started[0]}) without the `spawns`"
                           " marker (tests/spawn_guard.py)")  # fmt: skip
