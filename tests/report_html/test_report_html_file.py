"""`report --html` as a file: one self-contained page, session text kept out of markup.

GIVEN sessions (recorded or hand-written through the real writer)
WHEN `ttrecord report SESSION.db --html -o FILE` runs
THEN FILE is a single page with no external reference whose embedded data is the session's,
and bad input gets a one-line error, never a traceback.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys

from ttrecord.report.html import embed_json, page
import pytest

pytestmark = pytest.mark.spawns


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ttrecord.cli.main", *args],
                          capture_output=True, text=True)  # fmt: skip


def _embedded(html: str) -> dict:
    m = re.search(r'<script type="application/json" id="data">(.*?)</script>', html, re.S)
    assert m is not None
    return json.loads(m.group(1))


def test_embedded_json_cannot_close_its_script_element():
    text = "</script><script>alert(1)</script><!-- & \u2028"
    out = embed_json({"message": text})
    assert "<" not in out and ">" not in out and "&" not in out and "\u2028" not in out
    assert json.loads(out) == {"message": text}


def test_page_with_markup_in_every_field_has_only_its_own_elements():
    payload = {"info": {"script": "/x/<title><script>x()&amp;.py", "path": "s.db", "status": "ok"},
               "note": "</script><img src=x>"}  # fmt: skip
    html = page(payload)
    assert html.count("<script") == 3  # error catcher, data, the page's script
    assert "<img" not in html
    assert "<title>ttrecord · &lt;title&gt;&lt;script&gt;x()&amp;amp;.py · ok</title>" in html
    assert _embedded(html) == payload


def test_report_of_a_recorded_sample_is_one_offline_file(tmp_path):
    from report_samples import SAMPLES, record

    db = record(SAMPLES / "alloc_after_capture.py", tmp_path)
    out = tmp_path / "out.html"
    proc = _cli("report", str(db), "--html", "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == ""  # the terminal report is not printed as well
    html = out.read_text()
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:|//)""", html)  # nothing fetched
    assert "default-src 'none'" in html
    data = _embedded(html)
    assert [f["rule"] for f in data["findings"]] == ["TR004"]
    assert data["findings"][0]["line"] == 35
    (hazard,) = data["hazards"]
    m = data["maps"][hazard["m"]]
    assert (m["device"], m["type"]) == (1, "DRAM")
    assert m["lo"] + m["addr"][hazard["i"]] == 0x101080
    ranges = [data["ranges"][r] for r in hazard["ranges"]]
    assert any(r["w"] == 1 and r["a"] <= 0x101080 < r["e"] for r in ranges)
    # every buffer of the session: 8 tensors' and the kernel binaries of its 2 programs
    assert sum(mp["n"] for mp in data["maps"]) == 10


def test_default_output_is_next_to_the_session(tmp_path):
    from report_samples import SAMPLES, record

    db = record(SAMPLES / "clean_decode.py", tmp_path)
    proc = _cli("report", str(db), "--html")
    assert proc.returncode == 0, proc.stderr
    assert db.with_suffix(".html").exists()
    assert str(db.with_suffix(".html")) in proc.stderr


def test_bad_input_is_one_line_and_nonzero(tmp_path):
    not_session = tmp_path / "x.db"
    not_session.write_text("hello")
    proc = _cli("report", str(not_session), "--html", "-o", str(tmp_path / "r.html"))
    assert proc.returncode != 0
    assert len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr
    assert not (tmp_path / "r.html").exists()

    from report_samples import SAMPLES, record

    db = record(SAMPLES / "clean_decode.py", tmp_path)
    proc = _cli("report", str(db), "--html", "-o", str(tmp_path / "missing" / "r.html"))
    assert proc.returncode != 0
    assert len(proc.stderr.strip().splitlines()) == 1 and "no such folder" in proc.stderr
