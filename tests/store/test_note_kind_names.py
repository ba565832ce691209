"""Note kinds are named by their `NoteKind` member, never spelt as a bare string: a renamed or
misspelt note kind then fails at import, and `NoteKind` lists every note kind the format has
(docs/schema.md, Format policy)."""

from __future__ import annotations

import ast
from pathlib import Path

from ttrecord.events import NoteKind

ROOT = Path(__file__).resolve().parents[2]
CODE = [ROOT / "ttrecord", ROOT / "tui"]
OWNERS = {ROOT / "ttrecord" / "events.py", ROOT / "ttrecord" / "store" / "vocabulary.py"}
# The recorder's record builders still spell three note kinds; they go with its split into
# per-record builders.
PENDING = {ROOT / "ttrecord" / "recorder" / "recorder.py"}
NAMES = {n.value for n in NoteKind}


def _bare_note_kinds(path: Path) -> list[str]:
    """`file:line: 'name'` for each string literal (docstrings aside) that is a note kind."""
    tree = ast.parse(path.read_text())
    docstrings = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                docstrings.add(id(body[0].value))
        # a parameter looked up by name (`kwargs.get("global_semaphore")`) is not a note kind
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr == "get" and node.args):  # fmt: skip
            docstrings.add(id(node.args[0]))
    return [f"{path.relative_to(ROOT)}:{node.lineno}: {node.value!r}"
            for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str)
            and node.value in NAMES and id(node) not in docstrings]  # fmt: skip


def test_no_bare_note_kind_strings_outside_the_vocabulary():
    # GIVEN every module of the package and the UI but the vocabulary's own
    files = sorted(p for folder in CODE for p in folder.rglob("*.py") if p not in OWNERS | PENDING)
    # WHEN their string literals are read THEN none spells a note kind
    assert [hit for path in files for hit in _bare_note_kinds(path)] == []


def test_the_check_sees_a_bare_note_kind_where_one_is():
    # GIVEN the vocabulary, which spells each note kind once THEN the check finds them all
    found = _bare_note_kinds(ROOT / "ttrecord" / "events.py")
    assert len(found) >= len(NAMES)
