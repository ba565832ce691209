"""On a real recording of samples/alloc_after_capture.py, three keystrokes from `ttrecord tui`
reach the line marked `# expect: TR004` and the address the script printed."""

import re
from pathlib import Path

import pytest
from tui_pilot import settle, screen_text

from ttrecord.tui.app import TtrecordApp
from ttrecord.tui.memlayout import MapBar
from ttrecord.tui.screens.finding import FindingScreen
from ttrecord.tui.widgets.memory_map import MemoryMapView

SAMPLE = Path(__file__).resolve().parents[2] / "samples" / "alloc_after_capture.py"


@pytest.fixture(scope="module")
def recorded(tmp_path_factory, sample_cache):
    if not SAMPLE.exists():
        pytest.skip("samples/alloc_after_capture.py is not in this checkout")
    folder = tmp_path_factory.mktemp("recorded")
    run = sample_cache.get(SAMPLE)  # recorded once per test run
    assert run.returncode == 0, run.stderr
    run.copy_to(folder, "aac.db")
    address = int(re.search(r"bias buffer address: (\d+)", run.stdout).group(1))
    line = next(i for i, text in enumerate(SAMPLE.read_text().splitlines(), 1) if "# expect: TR004" in text)
    return folder, address, line


async def test_recorded_sample_in_three_keystrokes(recorded, monkeypatch):
    """GIVEN the recorded sample in the current folder (no stored findings: the UI analyses it
    on open) WHEN enter, enter, m are pressed THEN the finding shows the expected line
    highlighted and the allocated range at the printed address, and the memory map selects
    the buffer at that address, marked as overlapping trace memory."""
    folder, address, line = recorded
    monkeypatch.chdir(folder)
    app = TtrecordApp([])
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)  # the analysis runs in a worker
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, FindingScreen) and app.screen.finding.rule == "TR004"
        text = screen_text(app)
        assert f"{SAMPLE}:{line}" in text
        assert re.search(rf"❱ {line}\s+bias = ttnn.from_torch", text)
        assert f"allocated: [{address:#x}, " in text
        await pilot.press("m")
        await settle(pilot)
        selected = app.screen.query_one(MemoryMapView).selected
        assert isinstance(selected, MapBar) and selected.hazards and selected.address == address
