""""What are this session's findings?" has one answer: `analysis.check.findings_for`. No other
module of the package or the UI reads stored findings or runs the detectors on a session, so
`check`, `report`, the HTML report, the UI, the exports and the pytest plugin cannot disagree
about whether stored findings are current."""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CODE = [ROOT / "ttrecord", ROOT / "tui"]
OWNER = ROOT / "ttrecord" / "analysis" / "check.py"
# Where the analysis itself is defined (`analyze_session` runs `run_detectors`).
DEFINED = ROOT / "ttrecord" / "analysis" / "__init__.py"
# Reading stored findings (`session.findings()`, `.findings_stamp()`, `.stored_summary()`) or
# running the detectors on a session (`analyze`, `analyze_session`, `run_detectors`).
_READS = {"findings", "findings_stamp", "stored_summary"}
_RUNS = {"analyze", "analyze_session", "run_detectors"}


def _offenders(files: list[Path]) -> list[str]:
    found = []
    for path in files:
        for node in ast.walk(ast.parse(path.read_text())):
            hit = None
            if isinstance(node, ast.Call):
                func = node.func
                name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
                if name in _RUNS or (name in _READS and isinstance(func, ast.Attribute) and not node.args):
                    hit = name
            elif isinstance(node, ast.ImportFrom):
                hit = next((a.name for a in node.names if a.name in _RUNS), None)
            if hit:
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {hit}")
    return found


def _code_files() -> list[Path]:
    files = sorted(p for folder in CODE for p in folder.rglob("*.py"))
    return [p for p in files if p not in (OWNER, DEFINED) and "store" not in p.relative_to(ROOT).parts]


def test_no_second_findings_path():
    # GIVEN every module of the package and the UI but the owner (and the store, which keeps
    # the rows) WHEN its code is read THEN none reads stored findings or runs the detectors
    assert _offenders(_code_files()) == []


def test_the_check_sees_a_second_path_where_one_is():
    # GIVEN the owner, which does both THEN the same check finds it (it is not blind)
    assert len(_offenders([OWNER])) >= 2
