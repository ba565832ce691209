"""Layering rules a newcomer can rely on: all SQL lives in `ttrecord/store/` (the rest of the
code asks the store's typed methods), and the analysis renders nothing (no rich)."""

import ast
import io
import re
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CODE = [ROOT / "ttrecord", ROOT / "tui"]
STORE = ROOT / "ttrecord" / "store"
# An SQL statement in a string literal: a keyword that starts one, and what it acts on.
_SQL = re.compile(
    r"\b(SELECT\b[\s\S]*\bFROM|INSERT\s+(OR\s+\w+\s+)?INTO|UPDATE\s+\w+\s+SET|DELETE\s+FROM"
    r"|CREATE\s+(TEMP\s+|UNIQUE\s+)?(TABLE|INDEX|VIEW)|DROP\s+TABLE|PRAGMA\s+\w+|ATTACH\s+DATABASE)\b"
)
# Running SQL on a session or a connection, whatever the text (a Textual DOM query's CSS
# selector, "#id" or ".class", is not SQL).
_CALL = re.compile(r"\.(query|query_iter|execute|executemany|executescript)\((?!f?[\"'][#.])")


def _python_files() -> list[Path]:
    return sorted(p for folder in CODE for p in folder.rglob("*.py") if STORE not in p.parents)


def _sql_strings(path: Path) -> list[tuple[int, str]]:
    """(line, text) of the string literals (docstrings aside) that hold an SQL statement."""
    source = path.read_text()
    docstrings = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                docstrings.add(body[0].lineno)
    found = []
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.STRING and tok.start[0] not in docstrings and _SQL.search(tok.string):
            found.append((tok.start[0], tok.string[:60]))
    return found


def test_no_sql_outside_the_store():
    # GIVEN every module of the package and the UI outside ttrecord/store/
    offenders = []
    for path in _python_files():
        rel = path.relative_to(ROOT)
        # WHEN its string literals and calls are read
        offenders += [f"{rel}:{line}: {text}" for line, text in _sql_strings(path)]
        for n, line in enumerate(path.read_text().splitlines(), 1):
            if _CALL.search(line) and not line.lstrip().startswith("#"):
                offenders.append(f"{rel}:{n}: {line.strip()[:60]}")
    # THEN none holds or runs SQL: that is the store's (typed methods on Session and friends)
    assert offenders == []


def test_the_sql_check_sees_sql_where_it_is():
    # GIVEN the store, where the SQL is THEN the same check finds plenty (it is not blind)
    found = sum(len(_sql_strings(p)) for p in STORE.rglob("*.py"))
    assert found > 30


def _imports(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


def test_the_analysis_renders_nothing():
    # GIVEN every analysis module (drift included) WHEN its imports are read
    renderers = {
        str(p.relative_to(ROOT)): sorted(n for n in _imports(p) if n.split(".")[0] == "rich")
        for p in (ROOT / "ttrecord" / "analysis").rglob("*.py")
    }
    # THEN none imports rich: output formatting lives in ttrecord/report/
    assert {k: v for k, v in renderers.items() if v} == {}
