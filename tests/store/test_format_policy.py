"""Format policy (docs/schema.md): a kind, a note kind or a column added without a
SCHEMA_VERSION bump fails here. Each version's vocabulary and columns are pinned in
tests/store/format_v<N>.json; a bump adds the new file, a committed session of the previous
version under tests/fixtures/, and a migration test that every reader opens it."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

from ttrecord.events import Kind, NoteKind, Phase, Status
from ttrecord.store import schema
from ttrecord.testing import SessionBuilder

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
FIXTURES = ROOT / "tests" / "fixtures"
_BUMP = ("is a format change: bump SCHEMA_VERSION, pin it in tests/store/format_v<N>.json and"
         " add a migration test (docs/schema.md, Format policy)")  # fmt: skip


def _columns(path: Path) -> dict[str, list[str]]:
    conn = sqlite3.connect(path)
    try:
        tables = [r[0] for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]  # fmt: skip
        return {t: [r[1] for r in conn.execute(f"PRAGMA table_info({t})")] for t in tables}
    finally:
        conn.close()


def _pinned() -> dict:
    return json.loads((HERE / f"format_v{schema.SCHEMA_VERSION}.json").read_text())


def test_the_vocabulary_is_the_pinned_one_of_this_version():
    # GIVEN the vocabulary of ttrecord/events.py and the one pinned for SCHEMA_VERSION
    pinned = _pinned()
    # THEN they are the same (an added member is a format change)
    for field, enum in (("kinds", Kind), ("note_kinds", NoteKind), ("phases", Phase),
                        ("statuses", Status)):  # fmt: skip
        assert sorted(m.value for m in enum) == sorted(pinned[field]), f"{field}: {_BUMP}"


def test_a_new_session_has_the_pinned_columns_of_this_version(tmp_path: Path):
    # GIVEN a session as the writer makes it today
    b = SessionBuilder()
    b.open_device()
    b.write(tmp_path / "s.db")
    # THEN its tables and columns are those pinned for SCHEMA_VERSION
    assert _columns(tmp_path / "s.db") == _pinned()["columns"], f"a column {_BUMP}"


def test_every_older_version_has_a_committed_session_and_a_pin():
    # GIVEN every schema version up to this one
    for version in range(1, schema.SCHEMA_VERSION + 1):
        # THEN its pin exists, and a committed session of that version has its columns
        pin = json.loads((HERE / f"format_v{version}.json").read_text())
        assert pin["version"] == version
        session = FIXTURES / f"session_v{version}.db"
        if version < schema.SCHEMA_VERSION or session.exists():
            assert _columns(session) == pin["columns"]


def test_the_schema_page_lists_the_vocabulary():
    # GIVEN docs/schema.md THEN every kind and note kind is named in it (and no removed kind)
    page = (ROOT / "docs" / "schema.md").read_text()
    named = set(re.findall(r"`([a-z_0-9]+)`", page))
    assert {k.value for k in Kind} <= named and {n.value for n in NoteKind} <= named
    kinds_row = next(line for line in page.splitlines() if line.startswith("| `kind` |"))
    assert set(re.findall(r"`([a-z_0-9]+)`", kinds_row)) - {"kind", "name"} == {k.value for k in Kind}


_SQL_WORDS = re.compile(r"\b(kind|phase)\s*(?:=|!=|<>)\s*'(\w+)'|\b(kind|phase)\s+IN\s*\(('[^)]*')\)")
_NOTE_WORDS = re.compile(r"kind = 'note' AND name\s*(?:=\s*('\w+')|IN\s*\(('[^)]*')\))")


def test_kinds_and_phases_in_the_store_sql_are_members_of_the_vocabulary():
    # GIVEN the store's SQL, which names kinds, phases and note kinds as text
    known = {"kind": {k.value for k in Kind}, "phase": {p.value for p in Phase}}
    notes = {n.value for n in NoteKind}
    used: dict[str, set[str]] = {"kind": set(), "phase": set(), "note": set()}
    for path in sorted((ROOT / "ttrecord" / "store").rglob("*.py")):
        source = path.read_text()
        for m in _SQL_WORDS.finditer(source):
            if m.group(1):
                used[m.group(1)].add(m.group(2))
            else:
                used[m.group(3)] |= set(re.findall(r"'(\w+)'", m.group(4)))
        for m in _NOTE_WORDS.finditer(source):
            used["note"] |= set(re.findall(r"'(\w+)'", m.group(1) or m.group(2)))
    # THEN every one is a member of ttrecord/events.py (a renamed member cannot leave the SQL
    # asking for a kind no ttrecord writes), and the scan is not blind
    assert used["kind"] <= known["kind"], used["kind"] - known["kind"]
    assert used["phase"] <= known["phase"], used["phase"] - known["phase"]
    assert used["note"] <= notes, used["note"] - notes
    assert {"op", "h2d", "d2h", "alloc", "trace_execute"} <= used["kind"]
    assert {"prep", "capture"} <= used["phase"] and "program_cache_miss" in used["note"]
