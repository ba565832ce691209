"""Reading what a screen shows for the fit tests: footer keys and cut numbers."""

from __future__ import annotations

import asyncio
import re
import time

from textual.widgets._footer import FooterKey

# A number cut by an ellipsis: digits or a hex address right before "…", or digits right after.
CUT_NUMBER = re.compile(r"(?:\d|0x[0-9a-f]+)…|…\d")


def footer_problems(app, text: str) -> list[str]:
    """Footer keys that are not shown whole on the last line, and a missing `?`."""
    last = text.rstrip("\n").splitlines()[-1]
    problems = []
    keys = [k for k in app.screen.query(FooterKey) if k.display]
    for key in keys:
        shown = f"{key.key_display} {key.description}".strip()
        if shown not in last:
            problems.append(f"footer key {shown!r} not whole in {last!r}")
    if "? Keys" not in last:
        problems.append(f"no '? Keys' in {last!r}")
    return problems


def cut_numbers(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if CUT_NUMBER.search(line)]


async def footer_ready(pilot, timeout: float = 10.0) -> None:
    """Wait for the footer to list its keys (it composes once the screen's bindings are in)."""
    deadline = time.monotonic() + timeout
    while not pilot.app.screen.query(FooterKey) and time.monotonic() < deadline:
        await asyncio.sleep(0.01)
    await pilot.pause()
