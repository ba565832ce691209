"""`check --format json`: exactly the documented shape, one object per finding."""

import io
import json
from pathlib import Path

import jsonschema

from ttrecord.report import jsonfmt
from ttrecord.report import check_session
from ttrecord.testing import SessionBuilder

from analysis_helpers import H, captured_step


def test_json_document_has_the_documented_keys(tmp_path):
    b = SessionBuilder()
    tid, x, w, y = captured_step(b)
    kept = b.alloc(H, parent=b.h2d(None, line=30, name="from_torch").seq)
    b.execute(tid, line=31)
    b.d2h(kept, line=35)  # the program reads what the replay overwrote
    b.release(tid, line=32)
    out = io.StringIO()
    jsonfmt.render(check_session(b.write(tmp_path / "s.db")), out)
    doc = json.loads(out.getvalue())
    assert set(doc) == {"version", "session", "backend", "status", "findings", "summary",
                        "nothing_to_judge", "changed_on_disk"}  # fmt: skip
    assert doc["version"] == 1
    assert (doc["backend"], doc["status"]) == ("emulator", "ok")
    (f,) = doc["findings"]
    assert set(f) == {"id", "severity", "title", "message", "file", "line", "function", "callers",
                      "occurrences", "folded", "events", "evidence", "fix",
                      "fingerprint"}  # fmt: skip
    assert (f["occurrences"], f["folded"]) == (1, [])
    assert (f["id"], f["severity"], f["file"], f["line"]) == ("TR004", "error", "model.py", 30)
    assert doc["summary"]["by_rule"] == {"TR004": 1}
    assert doc["summary"]["by_severity"] == {"error": 1, "warning": 0, "info": 0}


SCHEMA = json.loads((Path(__file__).resolve().parents[2] / "docs" / "check-json.schema.json").read_text())


def test_the_schema_accepts_the_document_and_rejects_a_changed_contract(tmp_path):
    b = SessionBuilder()
    tid, x, w, y = captured_step(b)
    kept = b.alloc(H, parent=b.h2d(None, line=30, name="from_torch").seq)
    b.execute(tid, line=31)
    b.d2h(kept, line=35)  # the program reads what the replay overwrote
    b.release(tid, line=32)
    out = io.StringIO()
    jsonfmt.render(check_session(b.write(tmp_path / "s.db")), out)
    doc = json.loads(out.getvalue())
    validator = jsonschema.Draft202012Validator(SCHEMA)
    validator.validate(doc)
    assert doc["findings"], "the document must carry a finding for the checks below to mean anything"
    for broken in (
        {k: v for k, v in doc.items() if k != "version"},
        {**doc, "version": 2},
        {**doc, "findings": [{**doc["findings"][0], "line": "30"}]},
        {**doc, "findings": [{**doc["findings"][0], "extra": 1}]},
    ):
        assert not validator.is_valid(broken)
