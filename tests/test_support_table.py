"""docs/support.md is what scripts/support_table.py makes of the committed lane results, and the
comparison CI runs after each lane catches a release whose behaviour moved."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

from ttrecord import ttnn_versions as tv

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "support_table.py"


def _module():
    spec = importlib.util.spec_from_file_location("support_table", SCRIPT)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_support_doc_matches_the_committed_lane_results():
    st = _module()
    assert (ROOT / "docs" / "support.md").read_text() == st.render(st.load()), (
        "regenerate it: python scripts/support_table.py write")


def test_every_tested_release_has_a_lane_result_in_the_table():
    st = _module()
    lanes = st.load()["lanes"]
    assert set(tv.TESTED) == set(lanes), (tv.TESTED, sorted(lanes))
    assert lanes[tv.REFERENCE]["kind"] == "full" and "full_run" in lanes[tv.REFERENCE]
    table = (ROOT / "docs" / "support.md").read_text()
    for version in tv.TESTED:
        row = next(line for line in table.splitlines() if line.startswith(f"| {version} |"))
        assert "pass (" in row or "**fail**" in row, row
        # every capability the smoke lane proves has an outcome for every tested release
        assert "not run" not in row, row


def _junit(path: Path, cases: dict[str, str]) -> Path:
    body = []
    for name, state in cases.items():
        inner = {"passed": "", "failed": "<failure message='x'/>",
                 "skipped": "<skipped message='s'/>",
                 "xfailed": "<skipped type='pytest.xfail' message='x'/>"}[state]
        body.append(f"<testcase classname='tests.realttnn.test_version_facts' name='{name}'>{inner}</testcase>")
    path.write_text("<testsuites><testsuite>" + "".join(body) + "</testsuite></testsuites>")
    return path


@pytest.fixture
def isolated(tmp_path, monkeypatch):
    st = _module()
    monkeypatch.setattr(st, "RESULTS", tmp_path / "lane_results.json")
    monkeypatch.setattr(st, "DOC", tmp_path / "support.md")
    return st, tmp_path


def test_record_then_compare_flags_a_moved_outcome(isolated, capsys):
    st, tmp = isolated
    junit = _junit(tmp / "a.xml", {"test_allocator_first_addresses": "passed",
                                   "test_bindings_the_recorder_reads_exist": "failed"})
    assert st.main(["record", "0.70.1", str(junit)]) == 0
    saved = json.loads((tmp / "lane_results.json").read_text())["lanes"]["0.70.1"]["tests"]
    assert saved == {"test_version_facts.py::test_allocator_first_addresses": "passed",
                     "test_version_facts.py::test_bindings_the_recorder_reads_exist": "failed"}
    assert st.main(["compare", "0.70.1", str(junit)]) == 0
    # a new passing test does not change what the table claims; a regression does
    grown = _junit(tmp / "b.xml", {"test_allocator_first_addresses": "passed",
                                   "test_bindings_the_recorder_reads_exist": "failed",
                                   "test_new_fact": "passed"})
    assert st.main(["compare", "0.70.1", str(grown)]) == 0
    moved = _junit(tmp / "c.xml", {"test_allocator_first_addresses": "failed",
                                   "test_bindings_the_recorder_reads_exist": "passed"})
    assert st.main(["compare", "0.70.1", str(moved)]) == 1
    err = capsys.readouterr().err
    assert "test_allocator_first_addresses: passed -> failed" in err
    assert "test_bindings_the_recorder_reads_exist: failed -> passed" in err


def test_table_marks_failures_and_known_gaps(isolated):
    st, tmp = isolated
    junit = _junit(tmp / "a.xml", {"test_allocator_first_addresses": "failed",
                                   "test_bindings_the_recorder_reads_exist": "xfailed"})
    assert st.main(["record", "0.70.1", str(junit), "smoke", "DRAM starts elsewhere"]) == 0
    text = st.render(st.load())
    row = next(line for line in text.splitlines() if line.startswith("| 0.70.1 |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    head = next(line for line in text.splitlines() if line.startswith("| ttnn |"))
    names = [c.strip() for c in head.strip("|").split("|")]
    by = dict(zip(names, cells))
    assert by["lane result"].startswith("**fail**")
    assert by["allocator address sequence"] == "**no**"
    assert by["introspection bindings"] == "known gap"
    assert by["check: rules on recorded events, audit mode"] == "not run"
    assert "- **0.70.1**: DRAM starts elsewhere" in text


@pytest.mark.spawns
def test_bad_input_is_one_line_and_nonzero(tmp_path):
    for args in (["bogus"], ["record", "0.1.0", str(tmp_path / "missing.xml")]):
        proc = subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True)
        assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
        assert "Traceback" not in proc.stderr


def test_full_lane_counts_survive_a_smoke_only_rerun(isolated):
    st, tmp = isolated
    whole = tmp / "whole.xml"
    whole.write_text("<testsuites><testsuite>"
                     "<testcase classname='tests.realttnn.test_version_facts' name='test_a'/>"
                     "<testcase classname='tests.realttnn.test_real_ttnn' name='test_b'/>"
                     "<testcase classname='tests.realttnn.test_real_ttnn' name='test_c'>"
                     "<failure message='x'/></testcase></testsuite></testsuites>")
    assert st.main(["record", "0.81.1", str(whole), "full"]) == 0
    assert st.load()["lanes"]["0.81.1"]["full_run"] == {"failed": 1, "passed": 2}
    assert st.main(["record", "0.81.1", str(_junit(tmp / "s.xml", {"test_a": "passed"}))]) == 0
    lane = st.load()["lanes"]["0.81.1"]
    assert lane["kind"] == "full" and lane["full_run"] == {"failed": 1, "passed": 2}
    assert "whole lane **fail** (1 failed, 2 passed)" in st.render(st.load())
