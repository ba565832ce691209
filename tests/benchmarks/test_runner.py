"""`python -m benchmarks` finds every benchmark module and collects the JSON lines each prints.

The real benchmarks take minutes, so collection is checked on small stand-in modules laid out
the way the runner expects (a `benchmarks` package run with `python -m benchmarks.<name>`).
"""

import ast
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks import __main__ as runner  # noqa: E402

FAKES = {
    "prints_rows": (
        "import json\n"
        "print('a heading that is not JSON')\n"
        "print(json.dumps({'benchmark': 'first', 'us': 1.5}))\n"
        "print('{not json either')\n"
        "print(json.dumps({'benchmark': 'second', 'ratio': 2}))\n"
    ),
    "fails": (
        "import json, sys\n"
        "print(json.dumps({'benchmark': 'partial', 'x': 1}))\n"
        "sys.exit('session too small to measure')\n"
    ),
}


def _runs_as_script(path: Path) -> bool:
    tree = ast.parse(path.read_text())
    for node in tree.body:
        if isinstance(node, ast.If) and "__main__" in ast.unparse(node.test):
            return True
    return False


def test_every_benchmark_module_is_discovered_and_helpers_are_not():
    """GIVEN the benchmarks folder WHEN the runner discovers modules THEN it lists exactly the
    modules that run on their own (a __main__ guard), not the package files or the helpers"""
    folder = Path(runner.__file__).parent
    runnable = {p.stem for p in folder.glob("*.py") if p.stem != "__main__" and _runs_as_script(p)}
    found = runner.discover()
    assert set(found) == runnable
    assert found == sorted(found)
    assert {"alternatives", "store_throughput", "recording_overhead"} <= set(found)
    assert not {"__init__", "__main__", "synthetic"} & set(found)


@pytest.fixture
def fake_benchmarks(tmp_path, monkeypatch):
    package = tmp_path / "benchmarks"
    package.mkdir()
    (package / "__init__.py").write_text("")
    for name, source in FAKES.items():
        (package / f"{name}.py").write_text(source)
    monkeypatch.setattr(runner, "HERE", package)
    return package


@pytest.mark.spawns
def test_json_lines_are_collected_and_failures_report_their_last_error_line(
    fake_benchmarks, capsys
):
    """GIVEN one module printing JSON rows among other output and one that exits with an error
    WHEN the runner runs them THEN it keeps exactly the JSON objects, names the failure by its
    last stderr line, prints the machine and then every row (with the load average) as a JSON
    line and exits non-zero"""
    assert runner.discover() == ["fails", "prints_rows"]
    rows, error = runner.run_one("prints_rows")
    assert error == ""
    assert rows == [{"benchmark": "first", "us": 1.5}, {"benchmark": "second", "ratio": 2}]
    rows, error = runner.run_one("fails")
    assert rows == [{"benchmark": "partial", "x": 1}]
    assert error == "session too small to measure"
    assert runner.main([]) == 1
    printed = [line for line in capsys.readouterr().out.splitlines() if line.startswith("{")]
    first = json.loads(printed.pop(0))  # the machine the figures were taken on comes first
    assert first["benchmark"] == "machine" and first["nproc"] >= 1 and len(first["load_avg"]) == 3
    rows = [json.loads(line) for line in printed]
    assert all(isinstance(row.pop("load_avg_1m"), float) for row in rows)
    assert rows == [
        {"benchmark": "partial", "x": 1},
        {"benchmark": "first", "us": 1.5},
        {"benchmark": "second", "ratio": 2},
    ]
    assert runner.main(["--only", "prints_rows"]) == 0


def test_the_targets_table_is_built_from_one_run():
    """GIVEN a run's rows (one figure met, one not, one target not measured) WHEN the Targets
    table is built THEN each target shows its figure, the row it came from and the verdict, and
    RESULTS.md has the block `--write-results` replaces."""
    from benchmarks import targets

    rows = [{"benchmark": "check_speed", "analyze_s": 3.2, "load_avg_1m": 0.4},
            {"benchmark": "store_throughput", "events_per_s": 150_000, "load_avg_1m": 0.5},
            {"benchmark": "html_report", "session": "live-5000", "open_s": 0.1}]  # fmt: skip
    table = targets.table(rows).splitlines()
    assert len(table) == 2 + len(targets.TARGETS)
    check = next(ln for ln in table if ln.startswith("| `ttrecord check`"))
    assert "3.2 s (`check_speed.analyze_s`) | met | 0.4" in check
    store = next(ln for ln in table if ln.startswith("| Event throughput"))
    assert "150,000 events/s" in store and "**not met**" in store
    html = next(ln for ln in table if ln.startswith("| HTML report of"))
    assert "not measured in this run" in html  # the 1M-event session's row is not there
    text = targets.RESULTS.read_text(encoding="utf-8")
    replaced = targets.replace_table(text, "NEW")
    assert f"{targets.BEGIN}\nNEW\n{targets.END}" in replaced and replaced != text


def test_a_target_the_run_did_not_measure_keeps_its_earlier_row(tmp_path: Path) -> None:
    """GIVEN a RESULTS.md whose table measured two targets WHEN a run that measured only one of
    them rewrites it with `keep` THEN the other keeps its earlier line, and without `keep` it
    says not measured."""
    from benchmarks import targets

    earlier = targets.table([{"benchmark": "check_speed", "analyze_s": 3.2, "load_avg_1m": 0.4},
                             {"benchmark": "diff_speed", "total_s": 1.1, "load_avg_1m": 0.7}])  # fmt: skip
    results = tmp_path / "RESULTS.md"
    results.write_text(f"# r\n{targets.BEGIN}\n{earlier}\n{targets.END}\n", encoding="utf-8")
    run = [{"benchmark": "check_speed", "analyze_s": 2.5, "load_avg_1m": 9.0}]
    targets.write(run, results, keep=True)
    table = results.read_text(encoding="utf-8")
    assert "2.5 s (`check_speed.analyze_s`) | met | 9.0" in table and "3.2 s" not in table
    assert "1.1 s (`diff_speed.total_s`) | met | 0.7" in table
    targets.write(run, results)
    diff = next(ln for ln in results.read_text(encoding="utf-8").splitlines() if "`ttrecord diff`" in ln)
    assert "not measured in this run" in diff
