"""The overview's findings: grouped by rule and call site with counts and traces, a group
opens to its findings; the hint for an unchecked session is shown whole; the sessions list
keeps its findings column at 160 columns and at 80."""

import dataclasses
import shutil

from tui_pilot import settle, screen_text
from tui_sessions import SCRIPT, alloc_after_capture_finding, build_alloc_after_capture

from ttrecord.findings import Finding, Severity
from ttrecord.store.writer import replace_findings
from ttrecord.testing import store_current_findings
from ttrecord.tui import snapshots
from ttrecord.tui.app import TtrecordApp
from ttrecord.tui.finding_groups import group_findings
from ttrecord.tui.screens.finding import FindingScreen
from ttrecord.tui.screens.overview import OverviewScreen


def _many(path, n=998):
    base = alloc_after_capture_finding(18, 20, 13)
    per_trace = [dataclasses.replace(base, trace=t, evidence={**base.evidence, "trace": t}) for t in range(n)]
    other = Finding(rule="TR001", severity=Severity.ERROR, title="Readback in capture",
                    message="`to_torch` reads during capture.", fix="Read after end_trace_capture.",
                    file=SCRIPT, line=20, events=[21], trace=3)  # fmt: skip
    store_current_findings(path, [*per_trace, other])


def test_groups_count_occurrences_and_span_their_traces():
    """GIVEN 998 findings of one rule at one line, one per trace, and one at another line WHEN
    grouped THEN two groups: 998 occurrences over traces 0–997, and the other alone."""
    base = alloc_after_capture_finding(18, 20, 13)
    findings = [dataclasses.replace(base, trace=t) for t in range(998)]
    findings.append(dataclasses.replace(base, rule="TR001", line=20, trace=3))
    groups = group_findings(findings)
    assert [(g.first.rule, g.count, g.traces) for g in groups] == [("TR004", 998, "0–997"), ("TR001", 1, "3")]


async def test_a_998_row_findings_list_is_two_rows_that_open(workdir):
    """GIVEN a session with 998 TR004 findings at one line and a TR001 elsewhere WHEN its
    overview opens at 80x24 THEN both rules are on screen with their counts and traces; enter
    opens the group to its findings and enter on one opens that finding."""
    path = build_alloc_after_capture(workdir)
    _many(path)
    app = TtrecordApp([str(path)])
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, OverviewScreen)
        text = screen_text(app)
        lines = [" ".join(line.split()) for line in text.splitlines()]
        tr004 = next(line for line in lines if line.startswith("error TR004"))
        assert "998" in tr004 and "0–997" in tr004 and f"{SCRIPT}:18" in tr004
        assert any(line.startswith("error TR001") and f"{SCRIPT}:20" in line for line in lines)
        assert "2 rule/line groups" in text
        await pilot.press("enter")  # opens the TR004 group
        await settle(pilot)
        assert len(screen.row_items) == 2 + snapshots_member_rows()
        await pilot.press("down", "down", "enter")  # the second of its findings
        await settle(pilot)
        assert isinstance(app.screen, FindingScreen) and app.screen.finding.trace == 1


def snapshots_member_rows() -> int:
    from ttrecord.tui.screens.overview import MAX_MEMBER_ROWS

    return min(998, MAX_MEMBER_ROWS)


async def test_unchecked_session_hint_is_whole_at_80_columns(workdir, monkeypatch):
    """GIVEN a session too large to analyse on open, with no stored findings WHEN its
    overview opens at 80x24 THEN the hint names the whole command to run."""
    path = build_alloc_after_capture(workdir)
    replace_findings(path, [])
    monkeypatch.setattr(snapshots, "ANALYSE_ON_OPEN_MAX_EVENTS", 5)
    app = TtrecordApp([str(path)])
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        text = " ".join(" ".join(screen_text(app).split()).split("\n"))
    assert "No stored findings: run `ttrecord check alloc_after_capture.db` to analyse it." in text


async def test_sessions_list_keeps_findings_with_long_names(workdir):
    """GIVEN sessions with long file names WHEN listed at 160 and at 80 columns THEN the
    findings and events columns are whole on every row."""
    path = build_alloc_after_capture(workdir)
    for i in range(3):
        shutil.copy(path, workdir / f"decoder_llama_70b_prefill_and_decode_trace_capture_run_{i:04}.db")
    for size in ((160, 30), (80, 24)):
        app = TtrecordApp(["."])
        async with app.run_test(size=size) as pilot:
            await settle(pilot)
            rows = [line for line in screen_text(app).splitlines() if ".db" in line]
        assert len(rows) == 4
        assert all("1 error" in row and " 22 " in row for row in rows), rows
