"""Format policy (docs/schema.md): a session written by a newer ttrecord, holding an event
kind, a note kind or a column this one does not know, opens in every reader. Unknown kinds are
carried through as data ("unknown kind X" where kinds are printed) and the rules pass over
them; an extra column is ignored. The committed version-1 sessions open in the same readers."""

from __future__ import annotations

import json
import re
import shutil
import sqlite3
from pathlib import Path

import pytest

from ttrecord.cli.main import main
from ttrecord.events import CALL_KINDS, Event, Kind, kind_label
from ttrecord.store.reader import Session
from ttrecord.testing import SessionBuilder

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"
NEW_KIND, NEW_NOTE = "frobnicate", "frobnicate_note"
# What `check` finds in each session: the newer one's trace is never released; the v1 ones
# were recorded from samples/alloc_after_capture.py and samples/address_drift.py.
EXPECTED = {"newer.db": ["TR009"], "session_v1.db": ["TR004"], "session_v1_drift.db": []}


def write_newer_session(path: Path) -> Path:
    """A never-released trace (TR009) through the real writer, then what a newer recorder
    would add: a row of an unknown kind, a note of an unknown note kind, extra columns."""
    b = SessionBuilder()
    b.open_device()
    x, y = b.alloc(0x1000), b.alloc(0x2000)
    trace = b.begin_trace(10)
    b.op("ttnn.add", [x], [y], 11)
    b.end_trace(trace, 12)
    b.execute(trace, 14)
    b.note(NEW_NOTE, 15, {"why": "a newer recorder"})
    b.write(path)
    conn = sqlite3.connect(path)
    with conn:
        seq = conn.execute("SELECT max(seq) FROM events").fetchone()[0] + 1
        conn.execute("ALTER TABLE events ADD COLUMN colour TEXT")
        conn.execute("ALTER TABLE tensors ADD COLUMN lanes INTEGER DEFAULT 4")
        conn.execute("ALTER TABLE session ADD COLUMN planet TEXT")
        conn.execute(
            "INSERT INTO events (seq, t_ns, thread, kind, name, phase, status, colour)"
            " VALUES (?, ?, 0, ?, 'ttnn.frob', 'eager', 'ok', 'red')",
            (seq, seq * 1_000_000, NEW_KIND),
        )
    conn.close()
    return path


@pytest.fixture
def newer(tmp_path: Path) -> Path:
    return write_newer_session(tmp_path / "newer.db")


@pytest.fixture(params=["newer.db", "session_v1.db", "session_v1_drift.db"])
def any_session(request, tmp_path: Path) -> Path:
    if request.param == "newer.db":
        return write_newer_session(tmp_path / "newer.db")
    return Path(shutil.copy(FIXTURES / request.param, tmp_path / request.param))


def test_an_unknown_kind_is_carried_through_by_the_reader(newer: Path):
    # GIVEN a session with an unknown kind WHEN read as a page and by seq
    with Session.open(newer) as s:
        page = s.events(limit=1000)
        frob = [ev for ev in page if ev.name == "ttnn.frob"]
        by_seq = s.events_at([frob[0].seq]) if frob else []
        notes = [ev for ev in page if ev.kind is Kind.NOTE]
    # THEN it is an event of an unknown kind, labelled as such, the same member each time
    assert len(frob) == 1 and len(by_seq) == 1
    kind = frob[0].kind
    assert isinstance(kind, Kind) and not kind.known and kind.value == NEW_KIND
    assert by_seq[0].kind is kind and kind not in CALL_KINDS and kind not in list(Kind)
    assert kind.label == f"unknown kind {NEW_KIND}" == kind_label(NEW_KIND)
    assert Kind.OP.known and Kind.OP.label == "op" and kind_label("op") == "op"
    # (an unknown note kind is a note like any other, its name kept)
    assert [n.name for n in notes] == [NEW_NOTE]


def test_the_writer_keeps_an_unknown_kind(tmp_path: Path):
    # GIVEN an event of an unknown kind (as a session copied by a newer ttrecord holds)
    b = SessionBuilder()
    b.open_device()
    b.events.append(Event(seq=len(b.events) + 1, kind=Kind(NEW_KIND), name="ttnn.frob", t_ns=9_000))
    # WHEN written and read back
    b.write(tmp_path / "copy.db")
    with Session.open(tmp_path / "copy.db") as s:
        kinds = [ev.kind for ev in s.events()]
    # THEN the kind's text is what was stored and read
    assert kinds[-1] is Kind(NEW_KIND) and kinds[-1].value == NEW_KIND


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_check_reads_it(any_session: Path, fmt: str, capsys):
    # WHEN checked
    code = main(["check", str(any_session), "--format", fmt])
    out, err = capsys.readouterr()
    # THEN its findings are reported (exit 1 when there are), never "damaged session contents"
    expected = EXPECTED[any_session.name]
    assert code == (1 if expected else 0), err
    assert "damaged" not in out + err
    if fmt == "json":
        assert sorted({f["id"] for f in json.loads(out)["findings"]}) == expected
    else:
        assert all(rule in out for rule in expected)


def test_report_text_json_and_html_read_it(any_session: Path, tmp_path: Path, capsys):
    # WHEN reported as text, JSON and HTML
    assert main(["report", str(any_session)]) == 0
    text, err = capsys.readouterr()
    assert main(["report", str(any_session), "--format", "json"]) == 0
    doc, err2 = capsys.readouterr()
    html = tmp_path / "r.html"
    assert main(["report", str(any_session), "--html", "-o", str(html)]) == 0
    capsys.readouterr()
    # THEN each is written, and a newer session's unknown kind is shown as such
    assert "damaged" not in text + err + err2
    json.loads(doc)
    assert html.stat().st_size > 1000
    if any_session.name == "newer.db":
        assert f"unknown kind {NEW_KIND}" in text
        assert NEW_KIND in doc and NEW_KIND in html.read_text()


def test_exports_read_it(any_session: Path, tmp_path: Path, capsys):
    # WHEN exported for Perfetto and for the ttnn visualizer
    trace, folder = tmp_path / "t.json", tmp_path / "viz"
    assert main(["export", "perfetto", str(any_session), "-o", str(trace)]) == 0
    assert main(["export", "visualizer", str(any_session), "-o", str(folder)]) == 0
    capsys.readouterr()
    # THEN both are written; the trace keeps the unknown event (as an instant of its kind)
    events = json.loads(trace.read_text())["traceEvents"]
    assert (folder / "db.sqlite").is_file()
    if any_session.name == "newer.db":
        assert any(e.get("name") == "ttnn.frob" for e in events)


_ENUM_MAP = re.compile(
    r"\{[^{}\n]*:[^{}\n]*\bfor\s+\w+\s+in\s+(Kind|Phase|Status|NoteKind|SessionStatus)\b"
    r"|_value2member_map_"
)


def test_no_enum_map_outside_the_mapping_module():
    # GIVEN every module of the package and the UI
    allowed = {ROOT / "ttrecord" / "store" / "vocabulary.py", ROOT / "ttrecord" / "events.py"}
    offenders = [
        f"{p.relative_to(ROOT)}:{n}"
        for folder in (ROOT / "ttrecord", ROOT / "tui")
        for p in sorted(folder.rglob("*.py"))
        if p not in allowed
        for n, line in enumerate(p.read_text().splitlines(), 1)
        if _ENUM_MAP.search(line)
    ]
    # THEN text <-> member maps of the vocabulary exist only in ttrecord/store/vocabulary.py
    assert offenders == []
    # (and the check sees one where it is)
    assert _ENUM_MAP.search((ROOT / "ttrecord" / "store" / "vocabulary.py").read_text())
