"""A rule added as one new module appears everywhere rules appear, with no other file touched:
`check` (text and SARIF), `check --help`, the generated README/docs tables, the UI's findings
list and, since it declares one, the memory map's highlight."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import pytest
from tui_pilot import settle, screen_text

from ttrecord.analysis import catalog
from ttrecord.analysis.registry import RuleDeclarationError, rules
from ttrecord.cli.main import main
from ttrecord.report.rule_docs import generate
from ttrecord.store.reader import Session
from ttrecord.testing import TILE_BYTES, SessionBuilder
from ttrecord.tui.app import TtrecordApp
from ttrecord.tui.memlayout import load_maps
from ttrecord.tui.screens.memory import MemoryScreen

ROOT = Path(__file__).resolve().parents[2]
NAME = "tr099_captured_inputs"
# A throwaway rule, written the way the registry's docstring says a rule is written.
RULE_MODULE = '''
"""TR099 captured inputs: every buffer a trace reads that existed before its capture."""

from ttrecord.analysis.rules import Rule, finding
from ttrecord.findings import Severity


def detect(events, ctx):
    return [finding("TR099", ctx, t.begin, f"Trace {t.trace_id} reads {len(t.inputs())} inputs.")
            for t in ctx.traces if t.end is not None and t.inputs()]


def highlight(key, rows, traces, ranges, executes):
    marked = {}
    for row in rows:
        reads = tuple(r for t in traces for r in ranges.get(t.id, ())
                      if r.buffer_id == row[0] and r.role == "reads")
        if reads:
            marked[row[0]] = (row, reads)
    return marked


RULE = Rule(
    id="TR099", title="Captured inputs", severity=Severity.INFO, levels="info",
    summary="a trace reads buffers made before its capture", reported_when="a capture reads"
    " a buffer allocated before it", at="the `begin_trace_capture`", why="Inputs must be"
    " refreshed in place before each replay.", fix="Write new data into them in place.",
    detect=detect, highlight=highlight,
)
'''


@pytest.fixture
def added_rule(tmp_path, monkeypatch):
    """TR099's module in a folder of its own, put on the catalog's search path."""
    folder = tmp_path / "more_rules"
    folder.mkdir()
    (folder / f"{NAME}.py").write_text(textwrap.dedent(RULE_MODULE))
    monkeypatch.setattr(catalog, "__path__", [*catalog.__path__, str(folder)])
    yield folder
    sys.modules.pop(f"{catalog.__name__}.{NAME}", None)


@pytest.fixture
def session(workdir) -> Path:
    (workdir / "model.py").write_text("import ttnn\n" * 10)
    b = SessionBuilder(file="model.py")
    b.open_device(line=1)
    x, w = b.alloc(0x100000), b.alloc(0x100000 + TILE_BYTES)
    tid = b.begin_trace(line=2)
    h = b.alloc(0x100000 + 2 * TILE_BYTES)
    b.op("ttnn.matmul", [x, w], [h], line=3)
    b.end_trace(tid, line=4)
    b.execute(tid, line=5)
    b.release(tid, line=6)
    return b.write(workdir / "s.db")


def test_without_the_module_there_is_no_such_rule(session, capsys):
    """GIVEN the shipped catalog THEN TR099 is nowhere (the test below is not vacuous)."""
    assert "TR099" not in rules()
    assert main(["check", str(session)]) == 0
    assert "TR099" not in capsys.readouterr().out


def test_the_added_module_is_in_check_help_sarif_and_docs(added_rule, session, capsys):
    """GIVEN one new module on the catalog's path WHEN check, check --help, SARIF and the docs
    generator run THEN each shows TR099 from its declaration."""
    assert "TR099" in rules()

    assert main(["check", str(session)]) == 0  # an info finding: below --fail-on error
    out = capsys.readouterr().out
    assert "TR099" in out and "Trace 0 reads 2 inputs." in out

    with pytest.raises(SystemExit):
        main(["check", "--help"])
    assert "  TR099  Captured inputs (info)" in capsys.readouterr().out

    main(["check", str(session), "--format", "sarif"])
    run = json.loads(capsys.readouterr().out)["runs"][0]
    declared = {r["id"]: r for r in run["tool"]["driver"]["rules"]}
    assert declared["TR099"]["fullDescription"]["text"] == "Inputs must be refreshed in place before each replay."
    assert declared["TR099"]["help"]["text"] == "Write new data into them in place."
    assert [r["ruleId"] for r in run["results"]] == ["TR099"]

    tables = generate(ROOT, list(rules().values()))
    readme_now, readme = tables[ROOT / "README.md"]
    check_now, check_md = tables[ROOT / "docs" / "check.md"]
    assert "| TR099 | a trace reads buffers made before its capture | info |" in readme
    assert "| TR099 | info | a capture reads a buffer allocated before it | the `begin_trace_capture` |" in check_md
    assert readme != readme_now and check_md != check_now  # the committed tables would be stale


async def test_the_added_module_is_in_the_findings_list_and_the_memory_map(added_rule, session):
    """GIVEN the same rule WHEN the UI opens the session THEN its finding is listed and the
    memory map marks the two inputs it highlights (and nothing else: no TR004 here)."""
    with Session.open(session) as s:
        (dram,) = load_maps(s)
    marked = sorted(dram.bars[i].address for i in dram.bars.hazard_indices)
    assert marked == [0x100000, 0x100000 + TILE_BYTES]
    assert {r.role for i in dram.bars.hazard_indices for r in dram.bars[i].hazards} == {"reads"}

    app = TtrecordApp([str(session)])
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert "TR099" in screen_text(app)
        app.push_screen(MemoryScreen(session))
        await settle(pilot)
        assert "device 0 · DRAM (2!)" in screen_text(app)


def test_a_catalog_module_without_a_rule_is_an_error(tmp_path, monkeypatch):
    """GIVEN a module on the catalog's path that declares no RULE THEN discovery says so
    instead of silently leaving a rule out."""
    (tmp_path / "tr098_typo.py").write_text("RUEL = None\n")
    monkeypatch.setattr(catalog, "__path__", [*catalog.__path__, str(tmp_path)])
    try:
        with pytest.raises(RuleDeclarationError, match="tr098_typo declares no RULE"):
            rules()
    finally:
        sys.modules.pop(f"{catalog.__name__}.tr098_typo", None)
