"""An export shows the session's findings as `check` would report them, whether or not the
session was checked (docs/exports.md): both exporters take them from `findings_for`, and a
stale stored set is not what they show."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from export_helpers import decode_loop
from ttrecord.export import perfetto, visualizer
from ttrecord.findings import Finding, Severity
from ttrecord.store.reader import Session
from ttrecord.store.writer import replace_findings
from ttrecord.testing import SessionBuilder


def _unchecked(tmp_path: Path, model_file: Path) -> Path:
    b = SessionBuilder(file=str(model_file))
    decode_loop(b)  # a readback inside the capture: TR001
    return Path(b.write(tmp_path / "decode.db", script=str(model_file)))


def _perfetto_rules(session_path: Path, out: Path) -> list[str]:
    with Session.open(session_path) as s:
        perfetto.export(s, out)
    events = json.loads(out.read_text())["traceEvents"]
    return sorted(e["name"].split()[0] for e in events if e["name"].startswith("TR0"))


def test_a_never_checked_session_exports_its_findings(tmp_path, model_file):
    # GIVEN a session never checked: nothing stored, no stamp
    path = _unchecked(tmp_path, model_file)
    with Session.open(path) as s:
        assert s.findings() == [] and s.findings_stamp() is None
    # WHEN exported to Perfetto and as a TT-NN report
    rules = _perfetto_rules(path, tmp_path / "t.json")
    with Session.open(path) as s:
        visualizer.export(s, tmp_path / "report")
    # THEN both carry the TR001 `check` reports, and the export stored nothing
    assert rules == ["TR001"]
    conn = sqlite3.connect(tmp_path / "report" / "db.sqlite")
    meta = dict(conn.execute("SELECT key, value FROM report_metadata"))
    conn.close()
    assert [f["rule"] for f in json.loads(meta["ttrecord_findings"])] == ["TR001"]
    with Session.open(path) as s:
        assert s.findings_stamp() is None


def test_stale_stored_findings_are_not_exported(tmp_path, model_file):
    # GIVEN findings stored without a stamp (an older ttrecord's, or planted)
    path = _unchecked(tmp_path, model_file)
    replace_findings(str(path), [Finding(rule="TR009", severity=Severity.ERROR, title="stale",
                                         message="stale", fix="", events=[1])])  # fmt: skip
    # WHEN exported THEN the export shows the findings of this analysis, not the stale ones
    assert _perfetto_rules(path, tmp_path / "t.json") == ["TR001"]
