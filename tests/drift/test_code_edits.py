"""Diffs across code edits align by what ran, not by file:line.

Each pair records tests/drift/edits/decoder.py and, at the same path (the file edited in place)
or under another name, one edit of it: an inserted line (an extra tensor kept live), a moved
helper, a renamed file, two independent ops swapped, a genuinely different op. Every pair is
checked in the JSON, the text and the UI against the alignment and cause it should give.
"""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

pytestmark = pytest.mark.spawns

EDITS = Path(__file__).parent / "edits"
SCHEMA = json.loads(
    (Path(__file__).parents[2] / "docs/diff-json.schema.json").read_text()
)
TTRECORD = [sys.executable, "-m", "ttrecord"]
_INSERTED = (EDITS / "inserted_line.py").read_text().splitlines()
INSERTED_LINE = next(n for n, text in enumerate(_INSERTED, 1) if "cache = " in text)

# pair -> (exit code, matched counts, only_a, only_b, cause kind or None)
EXPECTED = {
    "inserted_line": (1, {"exact": 0, "signature": 7, "call_site": 0, "op": 0, "reordered": 0}, 0, 0,
                      "extra_allocation"),
    "moved_helper": (0, {"exact": 0, "signature": 7, "call_site": 0, "op": 0, "reordered": 0}, 0, 0, None),
    "renamed_file": (0, {"exact": 0, "signature": 7, "call_site": 0, "op": 0, "reordered": 0}, 0, 0, None),
    "reordered_ops": (1, {"exact": 5, "signature": 1, "call_site": 0, "op": 0, "reordered": 1}, 0, 0,
                      "reordered_ops"),
    "different_op": (1, {"exact": 6, "signature": 0, "call_site": 0, "op": 0, "reordered": 0}, 1, 1, None),
}  # fmt: skip


def _record(jobs: list[tuple[Path, Path]]) -> None:
    procs = [subprocess.Popen([*TTRECORD, "run", "--backend", "emulator", "-o", str(db),
                               str(script)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True) for script, db in jobs]  # fmt: skip
    for proc in procs:
        _, err = proc.communicate(timeout=180)
        assert proc.returncode == 0, err


@pytest.fixture(scope="module")
def pairs(tmp_path_factory) -> dict[str, tuple[str, str]]:
    """Each pair's sessions: the base recorded, then the edited script recorded at the same
    path (or, for the renamed file, at its new path)."""
    tmp = tmp_path_factory.mktemp("edits")
    before, after, out = [], [], {}
    for name in EXPECTED:
        folder = tmp / name
        folder.mkdir()
        script = folder / "decoder.py"
        shutil.copy(EDITS / "decoder.py", script)
        before.append((script, folder / "a.db"))
        out[name] = (str(folder / "a.db"), str(folder / "b.db"))
    _record(before)
    for name in EXPECTED:
        folder = tmp / name
        if name == "renamed_file":
            (folder / "v2").mkdir()
            edited = folder / "v2" / "decoder_v2.py"
            shutil.copy(EDITS / "decoder.py", edited)
        else:
            edited = folder / "decoder.py"
            shutil.copy(EDITS / f"{name}.py", edited)
        after.append((edited, folder / "b.db"))
    _record(after)
    return out


@pytest.mark.parametrize("name", list(EXPECTED))
def test_json_alignment_and_cause(pairs, run_diff_json, name):
    """GIVEN the base and one edit of it WHEN diffed as JSON
    THEN the report follows the schema, the ops align as expected (exact, by signature,
    reordered, unmatched), signature search is said, and the cause is the expected one."""
    code, report = run_diff_json(*pairs[name], "--all-ops")
    jsonschema.validate(report, SCHEMA)
    exit_code, matched, only_a, only_b, cause = EXPECTED[name]
    alignment = report["alignment"]
    assert (code, alignment["matched"], alignment["only_a"], alignment["only_b"]) == (
        exit_code, matched, only_a, only_b)  # fmt: skip
    assert alignment["key"] == "signature"
    assert (report["cause"] or {}).get("kind") == cause
    rows = report["ops"]
    assert sum(1 for r in rows if r["match"] is None) == only_a + only_b
    if name == "inserted_line":
        first = report["first_divergence"]
        assert first["a"]["name"].endswith("matmul") and first["match"] == "signature"
        assert first["b"]["line"] == first["a"]["line"] + 1
        assert [c["field"] for c in first["changes"]] == ["address"]
        allocation = report["cause"]["allocation"]
        assert (allocation["run"], allocation["line"]) == ("b", INSERTED_LINE)
        assert allocation["call"].endswith("from_torch")
        assert allocation["address"] == report["cause"]["displaced_address"]
        live = [(d["run"], d["line"]) for d in report["live_differences"]]
        assert live == [("b", INSERTED_LINE)]
        assert report["drift_by_buffer_type"][0]["kind"] == "constant_offset"
    elif name in ("moved_helper", "renamed_file"):
        assert report["drift"] is False and report["first_divergence"] is None
        assert all(r["status"] == "same" for r in rows)
    elif name == "reordered_ops":
        moved = [r for r in rows if r["match"] == "reordered"]
        assert len(moved) == 1 and moved[0]["a"]["name"].split(".")[-1] in ("relu", "gelu")
        assert moved[0]["b"]["index"] != moved[0]["a"]["index"]
        swapped = report["cause"]["reordered"]
        assert swapped["a"]["seq"] == moved[0]["a"]["seq"] and report["cause"]["allocation"] is None
        assert report["live_differences"] == []
    else:
        first = report["first_divergence"]
        assert first["status"] == "only_a" and first["a"]["name"].endswith("gelu")
        (silu,) = [r for r in rows if r["status"] == "only_b"]
        assert silu["b"]["name"].endswith("silu") and silu["b"]["line"] == first["a"]["line"]


def _text_counts(out: str) -> dict[str, int]:
    flat = " ".join(out.split())
    found = {"exact": r"([\d,]+) exact", "signature": r"([\d,]+) by tensor signature",
             "call_site": r"([\d,]+) at the same call site",
             "op": r"([\d,]+) as the same op at another call site", "reordered": r"([\d,]+) reordered"}
    return {k: int(m.group(1)) if (m := re.search(p, flat)) else 0 for k, p in found.items()}


@pytest.mark.parametrize("name", list(EXPECTED))
def test_text_says_how_ops_were_aligned_and_the_cause(pairs, run_diff, name):
    """GIVEN the same pairs WHEN diffed as text THEN the alignment sentence gives the same
    counts and the likely cause names the inserted line, the swapped ops or the other op."""
    code, out, err = run_diff(*pairs[name])
    exit_code, matched, only_a, only_b, cause = EXPECTED[name]
    flat = " ".join(out.split())
    assert code == exit_code and err == ""
    assert "Aligned by what ran (op, order, tensor signature" in flat
    assert _text_counts(out) == matched
    assert f"unmatched: {only_a} only in A, {only_b} only in B" in flat
    if name == "inserted_line":
        assert re.search(rf"B has a 2,048-byte DRAM buffer .* allocated at \S*decoder\.py:"
                         rf"{INSERTED_LINE} \(\S*from_torch\)", flat)  # fmt: skip
    elif name == "reordered_ops":
        assert "Likely cause the ops run in another order:" in flat
    elif name == "different_op":
        assert re.search(r"the runs call different ops here: A \S*gelu at \S*decoder\.py:(\d+),"
                         r" B \S*silu at \S*decoder\.py:\1", flat)  # fmt: skip
    else:
        assert "No drift: 7 ops aligned" in flat and "Likely cause" not in flat


async def _settle(pilot) -> None:
    for _ in range(5):
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()


@pytest.mark.parametrize("name", list(EXPECTED))
def test_the_diff_screen_shows_the_alignment_and_cause(pairs, name):
    """GIVEN the same pairs WHEN opened in the diff screen THEN its summary gives the same
    alignment and cause, and each row is tagged with how it matched (s: by signature,
    r: reordered, none: exact)."""
    from textual.app import App

    from ttrecord.tui.screens.diff import AlignedOps, DiffScreen

    exit_code, matched, only_a, only_b, cause = EXPECTED[name]

    class Host(App):
        def on_mount(self) -> None:
            self.push_screen(DiffScreen(*pairs[name]))

    async def scenario() -> None:
        app = Host()
        async with app.run_test(size=(160, 40)) as pilot:
            await _settle(pilot)
            screen = app.screen
            assert screen.report is not None and screen.report.drift == bool(exit_code)
            summary = " ".join(str(screen.query_one("#diff-summary").render()).split())
            assert _text_counts(summary) == matched
            assert f"unmatched: {only_a} only in A, {only_b} only in B" in summary
            if cause == "extra_allocation":
                assert re.search(rf"decoder\.py:{INSERTED_LINE} \(\S*from_torch\)", summary)
            elif cause == "reordered_ops":
                assert "the ops run in another order" in summary
            elif name == "different_op":
                assert "the runs call different ops here" in summary
            view = screen.query_one(AlignedOps)
            tags = [view.render_line(y) for y in range(len(view.rows))]
            tags = ["".join(seg.text for seg in strip)[1] for strip in tags]
            want = {"s": matched["signature"], "r": matched["reordered"], "c": 0}
            assert {t: tags.count(t) for t in "src"} == want

    asyncio.run(scenario())


def test_a_deleted_line_names_the_allocation_in_the_run_that_still_has_it(pairs, run_diff_json):
    """GIVEN the inserted-line pair the other way round (B is A with that line deleted)
    WHEN diffed THEN every op still pairs by signature and the cause is the allocation B no
    longer makes, given at its line in A."""
    a, b = pairs["inserted_line"]
    code, report = run_diff_json(b, a)
    assert code == 1 and report["alignment"]["matched"]["signature"] == 7
    cause = report["cause"]
    assert cause["kind"] == "missing_allocation"
    assert (cause["allocation"]["run"], cause["allocation"]["line"]) == ("a", INSERTED_LINE)
