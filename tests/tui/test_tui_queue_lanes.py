"""The timeline of a two-queue run: one lane per command queue and the host, event edges, and
the two accesses of a TR012 race marked and linked (tui/queue_lanes.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from tui_pilot import screen_text, settle

from ttrecord.store.reader import TimelineRow
from ttrecord.tui.app import TtrecordApp
from ttrecord.tui.queue_lanes import QueueLanes, lanes_of, race_marks
from ttrecord.tui.screens.finding import FindingScreen
from ttrecord.tui.screens.timeline import TimelineScreen
from ttrecord.tui.widgets.event_table import EventTable

pytestmark = pytest.mark.spawns

ROOT = Path(__file__).resolve().parents[2]
TTRECORD = Path(sys.executable).with_name("ttrecord")


@pytest.fixture(scope="module")
def race_session(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("lanes") / "race.db"
    subprocess.run([str(TTRECORD), "run", "--backend", "emulator", "-o", str(out),
                    str(ROOT / "samples" / "two_cq_missing_wait.py")], cwd=ROOT, capture_output=True,
                   timeout=180, check=True)  # fmt: skip
    return out


def _row(kind: str, name: str, queue: dict | None = None, seq: int = 1, device: int | None = 1) -> TimelineRow:
    return TimelineRow(seq, "eager", kind, name, device, None, None, None, None, "ok", None, None, (),
                       cq=None, queue=queue)  # fmt: skip


def test_each_call_lands_in_its_queue_lane_with_its_edge():
    rec = _row("sync", "ttnn.record_event", {"cq": 1, "event": "7 MeshEvent(id=0, device_id=1, mesh_cq_id=1)"})
    wait = _row("sync", "ttnn.wait_for_event", {"cq": 0, "event": "7 MeshEvent(id=0, device_id=1, mesh_cq_id=1)"})
    write = _row("h2d", "ttnn.copy_host_to_device_tensor", {"cq": 1})
    replay = _row("trace_execute", "ttnn.execute_trace", {"cq": 0, "blocking": False})
    read = _row("d2h", "ttnn.to_torch")
    sync = _row("sync", "ttnn.synchronize_device")
    assert lanes_of(rec) == {"1": "◆e7"}
    assert lanes_of(wait) == {"0": "◀e7←1"}  # CQ 0 waits for e7, recorded on CQ 1
    assert lanes_of(write) == {"1": "■ write"}
    assert lanes_of(replay) == {"0": "■ replay ~"}  # non-blocking: no host wait
    assert lanes_of(read) == {"0": "■ read", "host": "⇐ CQ0"}  # a blocking read waits
    assert lanes_of(sync) == {"host": "⇐ all"}


def test_a_race_mark_goes_on_the_access_lane():
    lanes = QueueLanes(2, {5: "A"})
    cell = lanes.cell(_row("h2d", "ttnn.copy_host_to_device_tensor", {"cq": 1}, seq=5))
    assert cell.split() == ["│", "⚡A", "■", "write", "│"]


async def test_a_tr012_finding_opens_the_timeline_with_both_accesses_linked(race_session):
    """GIVEN the missing-wait sample's TR012 WHEN its timeline is opened THEN the queue lanes
    show, the write (A) and the replay (B) are marked, and r jumps from one to the other."""
    app = TtrecordApp([str(race_session)])
    async with app.run_test(size=(200, 50)) as pilot:
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, FindingScreen) and app.screen.finding.rule == "TR012"
        marks = race_marks(app.screen.finding.evidence)
        assert sorted(marks.values()) == ["A", "B"]
        await pilot.press("t")
        await settle(pilot)
        assert isinstance(app.screen, TimelineScreen)
        text = screen_text(app)
        assert "CQ0" in text and "CQ1" in text and "host" in text
        assert "race: ⚡A event" in text
        table = app.screen.query_one(EventTable)
        first = min(marks, key=lambda s: marks[s] != "A")
        second = next(s for s in marks if s != first)
        table.load(table.filter, first)
        await settle(pilot)
        assert table.row(table.cursor).seq == first
        assert "⚡A ■ write" in screen_text(app)
        await pilot.press("r")
        await settle(pilot)
        assert table.row(table.cursor).seq == second
        assert "⚡B ■ replay" in screen_text(app)


async def test_a_one_queue_run_shows_no_lanes(alloc_session):
    app = TtrecordApp([str(alloc_session)])
    async with app.run_test(size=(160, 40)) as pilot:
        await settle(pilot)
        await pilot.press("t")
        await settle(pilot)
        assert app.screen.query_one(EventTable).lanes is None
        assert "CQ1" not in screen_text(app)
