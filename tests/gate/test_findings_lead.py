"""Rule: a finding leads with what to do: the line to change (the caller in the function that
holds the capture, not only the helper's ttnn call), then the fix, then the evidence; and
every reader shows the source the session stored, saying once when the file changed."""

from __future__ import annotations

import asyncio
import json

import pytest

from ttrecord.cli.main import main

from tests.gate.helper_session import CALLER_LINE, HELPER_LINE, build

pytestmark = pytest.mark.spawns


def test_text_leads_with_the_caller_line_then_the_fix(tmp_path, capsys):
    # GIVEN a readback inside a helper called from main inside the capture
    session, script = build(tmp_path)
    # WHEN checked
    main(["check", str(session)])
    out = capsys.readouterr().out
    # THEN the caller's line comes first, marked as the line to change, then the helper's,
    # then the fix, and the message and evidence after the fix
    lines = out.splitlines()
    change = next(i for i, ln in enumerate(lines) if "change here:" in ln)
    assert f"model.py:{CALLER_LINE} in main" in lines[change]
    assert "out = decode_step(x, w)" in lines[change + 1]
    helper = next(i for i, ln in enumerate(lines) if f"model.py:{HELPER_LINE} in decode_step" in ln)
    fix = next(i for i, ln in enumerate(lines) if ln.strip().startswith("fix:"))
    evidence = next(i for i, ln in enumerate(lines) if ln.strip() == "evidence:")
    assert change < helper < fix < evidence
    # AND the module-level entry point is shown after, as where the line was reached from
    assert any("reached from" in ln and "<module>" in ln for ln in lines[helper:fix])


def test_an_edited_script_shows_the_stored_source_and_says_so_once(tmp_path, capsys):
    # GIVEN a session and its script edited afterwards (lines moved down)
    session, script = build(tmp_path)
    script.write_text("# a new first line\n" * 3 + script.read_text())
    # WHEN checked in text and JSON, and reported
    main(["check", str(session)])
    out = capsys.readouterr().out
    main(["check", "--format", "json", str(session)])
    doc = json.loads(capsys.readouterr().out)
    main(["report", str(session)])
    report = capsys.readouterr().out
    # THEN the recorded lines are shown, not today's file
    assert f"{CALLER_LINE} | " in out and "out = decode_step(x, w)" in out
    assert "a new first line" not in out and "a new first line" not in report
    assert "out = decode_step(x, w)" in report
    # AND each says once that the file changed on disk
    assert " ".join(out.split()).count("Changed on disk since the recording") == 1
    assert " ".join(report.split()).count("Changed on disk since the recording") == 1
    assert doc["changed_on_disk"] == [str(script)]


def test_unedited_script_is_not_reported_changed(tmp_path, capsys):
    session, _script = build(tmp_path)
    main(["check", str(session)])
    assert "Changed on disk" not in capsys.readouterr().out


@pytest.mark.parametrize("size", [(80, 24), (100, 32)])
def test_tui_finding_shows_the_caller_line_and_scrolls_from_the_first_key(tmp_path, size):
    asyncio.run(_tui_finding(tmp_path, size))


async def _tui_finding(tmp_path, size):
    from textual.containers import VerticalScroll

    from tests.tui.tui_pilot import screen_text, settle
    from ttrecord.tui.app import TtrecordApp
    from ttrecord.tui.screens.finding import FindingScreen

    # GIVEN the helper session, checked
    session, _script = build(tmp_path)
    assert main(["check", "-q", str(session)]) == 1
    app = TtrecordApp([str(session)])
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        await pilot.press("enter")  # the finding
        await settle(pilot)
        assert isinstance(app.screen, FindingScreen)
        # THEN without scrolling, the line to change, the helper's line and the fix show
        text = screen_text(app)
        assert f"Change here  model.py:{CALLER_LINE} in main" in text
        assert "out = decode_step(x, w)" in text
        assert f"model.py:{HELPER_LINE} in decode_step" in text
        assert "Fix" in text
        # AND the footer names the scroll key
        footer = text.splitlines()[-1]
        assert "Scroll" in footer and "?" in footer
        # AND PageDown scrolls the page from the first key
        scroll = app.screen.query_one(VerticalScroll)
        assert scroll.scroll_y == 0
        await pilot.press("pagedown")
        await settle(pilot)
        assert scroll.scroll_y > 0


def test_tui_finding_says_keep_going(tmp_path):
    asyncio.run(_tui_keep_going(tmp_path))


async def _tui_keep_going(tmp_path):
    from tests.tui.tui_pilot import screen_text, settle
    from ttrecord.tui.app import TtrecordApp

    session, _script = build(tmp_path, keep_going=True)
    main(["check", "-q", str(session)])
    app = TtrecordApp([str(session)])
    async with app.run_test(size=(100, 32)) as pilot:
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        text = " ".join(screen_text(app).split())
        assert 'seen in keep-going mode: real ttnn stops here with TT_FATAL "Reads are not' in text
