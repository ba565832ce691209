"""`ttrecord tui` on a session still being recorded follows it, from start to crash.

GIVEN `ttrecord run` recording a program that waits at gates the test opens one by one
WHEN the UI is opened on the session file while the program runs
THEN event counts grow, a readback inside the capture shows up as TR001 while the program is
still running, the timeline grows and follows its end, and the status turns to crashed when
the program dies in a replay.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from pathlib import Path

from tui_pilot import screen_text

from ttrecord.tui.app import TtrecordApp
from ttrecord.tui.screens.overview import OverviewScreen
from ttrecord.tui.screens.timeline import TimelineScreen
from ttrecord.tui.widgets.event_table import EventTable
import pytest

pytestmark = pytest.mark.spawns

PROGRAM = '''import os, sys, time
import torch
import ttnn

os.environ["TTRECORD_EMULATOR_FAULT"] = "segv@replay:2"
gate = sys.argv[1]


def wait(n):
    while not os.path.exists(f"{gate}.{n}"):
        time.sleep(0.02)


device = ttnn.open_device(device_id=0, trace_region_size=800768)
x = ttnn.from_torch(torch.ones(32, 32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
y = ttnn.exp(x)
wait(1)
print("the program's stderr", file=sys.stderr, flush=True)
tid = ttnn.begin_trace_capture(device, cq_id=0)
y = ttnn.exp(x)
try:
    print(ttnn.to_torch(y))  # a readback inside the capture
except RuntimeError:
    pass
# The recorder sends a call's end with the next call's start: one more call, then wait.
y = ttnn.exp(y)
wait(2)
ttnn.end_trace_capture(device, tid, cq_id=0)
for _ in range(3):
    ttnn.execute_trace(device, tid, cq_id=0, blocking=True)
'''


def _is_session(db: Path) -> bool:
    from ttrecord.errors import SessionError
    from ttrecord.store.reader import Session

    if not db.exists():
        return False
    try:
        with Session.open(db):
            return True
    except SessionError:
        return False


async def _until(pilot, condition, what: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}:\n{screen_text(pilot.app)}")
        await asyncio.sleep(0.1)
        await pilot.pause()


def _overview(app) -> OverviewScreen:
    return next(s for s in app.screen_stack if isinstance(s, OverviewScreen))


async def test_ui_follows_a_recording_from_start_to_crash(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "program.py").write_text(PROGRAM)
    gate = tmp_path / "gate"
    db = tmp_path / "live.db"
    proc = subprocess.Popen(
        [sys.executable, "-m", "ttrecord.cli.main", "run", "--backend", "emulator", "-o", str(db),
         "program.py", str(gate)],
        cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        while not _is_session(db) and time.monotonic() < deadline:  # created, schema written
            await asyncio.sleep(0.05)
        app = TtrecordApp([str(db)])
        async with app.run_test(size=(120, 40)) as pilot:
            ov = lambda: _overview(app)  # noqa: E731
            # Start: the run is shown as running and its events arrive.
            await _until(pilot, lambda: ov().data is not None and ov().data.events >= 3, "first events")
            assert ov().data.info.status == "running"
            assert "Following the recording live" in screen_text(app)
            before = ov().data.events

            # A readback inside the capture: found while the program still runs.
            Path(f"{gate}.1").touch()
            await _until(pilot, lambda: any(f.rule == "TR001" for f in ov().data.findings),
                         "TR001 while running")  # fmt: skip
            assert ov().data.info.status == "running"
            assert ov().data.events > before
            assert proc.poll() is None  # the program is still waiting at gate 2
            assert "TR001" in screen_text(app)

            # The timeline follows its end as events arrive.
            await pilot.press("t")
            await _until(pilot, lambda: isinstance(app.screen, TimelineScreen)
                         and app.screen.query_one(EventTable).total > 0, "timeline rows")  # fmt: skip
            table = app.screen.query_one(EventTable)
            await pilot.press("end")
            rows_before = table.total
            Path(f"{gate}.2").touch()
            await _until(pilot, lambda: table.total > rows_before, "timeline to grow")
            await _until(pilot, lambda: table.cursor == table.total - 1
                         and table.row(table.cursor) is not None, "the cursor to follow the end")  # fmt: skip

            # The crash: the status changes and polling stops.
            await pilot.press("escape")
            await _until(pilot, lambda: ov().data.info.status == "crashed", "the crashed status")
            text = screen_text(app)
            assert "crashed" in text and "execute_trace" in text
            assert "Following the recording live" not in text
            await _until(pilot, lambda: ov()._poll is None, "polling to stop")
            assert any(f.rule == "TR001" for f in ov().data.findings)
        assert proc.wait(timeout=60) != 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
