"""A session recorded with `--verify-replay`: the replay's divergence is a finding the UI opens
like any other, with the values that prove it."""

from pathlib import Path

import pytest
from tui_pilot import settle, screen_text

from ttrecord.tui.app import TtrecordApp
from ttrecord.tui.screens.finding import FindingScreen

SAMPLE = Path(__file__).resolve().parents[2] / "samples" / "alloc_after_capture.py"


@pytest.fixture(scope="module")
def verified(tmp_path_factory, sample_cache):
    folder = tmp_path_factory.mktemp("verified")
    run = sample_cache.get(SAMPLE, "--verify-replay")  # recorded once per test run
    assert run.returncode == 0, run.stderr
    run.copy_to(folder, "v.db")
    return folder


async def test_replay_divergence_opens_at_the_execute_line(verified, monkeypatch):
    """GIVEN the verified alloc_after_capture session WHEN enter, down, enter THEN the TR004
    finding shows the TR011 proof folded under it (one mistake, one finding): the
    execute_trace line and the overwritten values, 1.0 before, 8.0 after."""
    monkeypatch.chdir(verified)
    app = TtrecordApp([])
    async with app.run_test(size=(120, 50)) as pilot:
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        await pilot.press("down", "enter")
        await settle(pilot)
        assert isinstance(app.screen, FindingScreen) and app.screen.finding.rule == "TR004"
        assert [item["rule"] for item in app.screen.finding.folded] == ["TR011"]
        text = screen_text(app)
        line = next(i for i, t in enumerate(SAMPLE.read_text().splitlines(), 1) if "ttnn.execute_trace(" in t)
        assert f"{SAMPLE}:{line}" in text
        assert "held 1.0 at [0, 0] before the replay and 8.0 after it" in " ".join(text.split())
