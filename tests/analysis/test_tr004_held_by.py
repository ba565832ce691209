"""TR004 names who kept a hazardous post-capture buffer alive: the references the recorder
found holding it at the replay (its `referrers` note), with the line each holder's frame was
running, as ttnn's tracker does with TT_METAL_TRACE_ALLOC_TRACKING_TRACEBACKS=1."""

from __future__ import annotations

import json
import shutil

import pytest

from ttrecord.cli.main import main
from ttrecord.store.referrer_rows import describe, parse_note
from ttrecord.testing import SessionBuilder

from analysis_helpers import H, Z, captured_step, rules_at


def _held(address: int, note_address: int | None = None) -> SessionBuilder:
    """A tensor allocated after the capture at `address`, read after the replay; the replay's
    referrers note names the holders of the buffer at `note_address` (default: that one)."""
    b = SessionBuilder()
    tid, x, w, y = captured_step(b)
    maker = b.h2d(None, line=30, name="from_torch")
    b.alloc(address, parent=maker.seq)
    ex = b.execute(tid, line=32)
    b.note("referrers", None, {"buffers": [{
        "buffer_type": "DRAM", "address": address if note_address is None else note_address,
        "held_by": ["serve: self.cache[3]", "main: bias"],
        "at": ["/src/model.py:42", "/src/model.py:60"]}]}, parent=ex.seq)  # fmt: skip
    b.d2h(b.events[-3].buffer, line=34)  # the program reads the tensor the replay wrote over
    b.release(tid, line=33)
    return b


def test_the_finding_says_which_references_held_the_buffer_at_the_replay(analyze_both):
    findings = analyze_both(_held(H))
    assert rules_at(findings) == [("TR004", 30)]
    f = findings[0]
    assert f.evidence["held_by"] == ["self.cache[3] (model.py:42)", "bias (model.py:60)"]
    assert f.evidence["held_at"] == "model.py:32"
    assert "At the replay at model.py:32 it was held by self.cache[3] (model.py:42) and bias (model.py:60)." in f.message


def test_a_note_about_another_buffer_names_nothing(analyze_both):
    f = analyze_both(_held(H, note_address=Z))[0]
    assert "held_by" not in f.evidence and "held by" not in f.message


def test_holders_without_lines_and_damaged_notes():
    assert describe(("step: self.kv[3]", None)) == "self.kv[3] in step"
    assert describe(("step: self.kv[3]", "/a/b/model.py:7")) == "self.kv[3] (model.py:7)"
    # sessions recorded before the lines were noted have no "at": the path alone
    assert parse_note({"buffers": [{"buffer_type": "DRAM", "address": 1, "held_by": ["main: x"]}]}) == {
        ("DRAM", 1): [("main: x", None)]}
    assert parse_note('{"buffers": "damaged"}') == {}
    assert parse_note("not json") == {}


@pytest.mark.slow
def test_the_alloc_after_capture_sample_names_bias_in_check_report_and_html(sample_cache, tmp_path, capsys):
    # GIVEN samples/alloc_after_capture.py: `bias` (line 35) lives across the replay at line 37
    db = tmp_path / "s.db"
    shutil.copy(sample_cache.get("alloc_after_capture").path, db)
    assert main(["check", "--format", "json", str(db)]) == 1
    (f,) = json.loads(capsys.readouterr().out)["findings"]
    assert (f["id"], f["line"]) == ("TR004", 35)
    assert f["evidence"]["held_by"] == ["bias (alloc_after_capture.py:37)"]
    said = "it was held by bias (alloc_after_capture.py:37)"
    assert said in f["message"]
    main(["check", str(db)])
    assert " ".join(capsys.readouterr().out.split()).count(said) == 1
    main(["report", str(db)])
    assert said in " ".join(capsys.readouterr().out.split())
    html = tmp_path / "s.html"
    assert main(["report", "--html", "-o", str(html), str(db)]) == 0
    assert "held by bias (alloc_after_capture.py:37)" in html.read_text()
