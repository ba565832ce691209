"""`check --format json`: exactly the documented shape, one object per finding."""

import io
import json

from ttrecord.report import jsonfmt
from ttrecord.report import check_session
from ttrecord.testing import SessionBuilder

from analysis_helpers import H, captured_step


def test_json_document_has_the_documented_keys(tmp_path):
    b = SessionBuilder()
    tid, x, w, y = captured_step(b)
    b.alloc(H, parent=b.h2d(None, line=30, name="from_torch").seq)
    b.execute(tid, line=31)
    b.release(tid, line=32)
    out = io.StringIO()
    jsonfmt.render(check_session(b.write(tmp_path / "s.db")), out)
    doc = json.loads(out.getvalue())
    assert set(doc) == {"session", "backend", "status", "findings", "summary"}
    assert (doc["backend"], doc["status"]) == ("emulator", "ok")
    (f,) = doc["findings"]
    assert set(f) == {"id", "severity", "title", "message", "file", "line", "function", "callers",
                      "occurrences", "folded", "events", "evidence", "fix"}  # fmt: skip
    assert (f["occurrences"], f["folded"]) == (1, [])
    assert (f["id"], f["severity"], f["file"], f["line"]) == ("TR004", "error", "model.py", 30)
    assert doc["summary"]["by_rule"] == {"TR004": 1}
    assert doc["summary"]["by_severity"] == {"error": 1, "warning": 0, "info": 0}
