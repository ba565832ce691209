"""The HTML page leads a finding with what to do: the line to change (the caller of a helper)
with its recorded source, each call down to the ttnn call as a link that shows its source, the
fix; and it says when there was nothing to judge.

GIVEN a readback inside a helper called from main inside the capture (SessionBuilder)
WHEN Chromium opens its `report --html` page
THEN the caller's line shows first, and clicking the helper's frame shows the helper's line.
"""

from __future__ import annotations

import sys
from pathlib import Path

from ttrecord.report.html import write_html_report
import pytest

pytestmark = pytest.mark.spawns

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from tests.gate.helper_session import CALLER_LINE, HELPER_LINE, build  # noqa: E402

FRAMES = """[...document.querySelectorAll('#findings .finding .frame')].map((n) => n.textContent)"""
EXCERPT_HIT = """(() => { const h = document.querySelector('#findings .finding pre.excerpt span.hit');
  return h ? h.textContent : null; })()"""


def test_the_caller_line_leads_and_each_frame_clicks_to_its_source(browser, tmp_path):
    session, _script = build(tmp_path)
    page = tmp_path / "helper.html"
    write_html_report(str(session), str(page))
    browser.open(page)
    assert browser.eval("window.__errors") == []
    frames = browser.eval(FRAMES)
    assert frames[0] == f"change here model.py:{CALLER_LINE} in main"
    assert frames[1] == f"which calls model.py:{HELPER_LINE} in decode_step"
    # the caller's recorded line is the highlighted one, above the fix
    assert "out = decode_step(x, w)" in browser.eval(EXCERPT_HIT)
    order = browser.eval("""(() => { const f = document.querySelector('#findings .finding');
      const kids = [...f.children].map((n) => n.className);
      return [kids.indexOf('frame current'), kids.indexOf('fix'), kids.indexOf('message')]; })()""")
    assert order[0] < order[1] < order[2]
    # WHEN the helper's frame is clicked THEN its line is shown
    box = browser.eval("""(() => { const a = document.querySelectorAll('#findings .frame a')[1];
      const r = a.getBoundingClientRect(); a.scrollIntoView(); const s = a.getBoundingClientRect();
      return {x: s.left + s.width / 2, y: s.top + s.height / 2}; })()""")
    browser.click(box["x"], box["y"])
    assert "return ttnn.to_torch(h)" in browser.eval(EXCERPT_HIT)


def test_nothing_to_judge_is_said_on_the_page(browser, tmp_path):
    from ttrecord.testing import SessionBuilder

    b = SessionBuilder(file=str(tmp_path / "m.py"))
    (tmp_path / "m.py").write_text("import ttnn\n" * 5)
    b.open_device(line=2)
    session = b.write(tmp_path / "eager.db")
    page = tmp_path / "eager.html"
    write_html_report(session, str(page))
    browser.open(page)
    text = browser.eval("document.getElementById('nothing-to-judge').textContent")
    assert text.startswith("Nothing to judge: No trace was captured")
    assert "No trace hazards found" not in browser.eval("document.getElementById('findings').textContent")


def test_how_to_drive_the_trace_is_on_the_page(browser, tmp_path):
    from tests.gate.test_drive import build as build_decode

    session = build_decode(tmp_path)
    page = tmp_path / "decode.html"
    write_html_report(session, str(page))
    browser.open(page)
    assert browser.eval("window.__errors") == []
    text = browser.eval("document.getElementById('drive').textContent")
    assert "trace 0 (device 0, captured at decode.py:6-9)" in text
    assert "tokens [32, 32] BFLOAT16 at decode.py:4" in text
    snippet = browser.eval("document.querySelector('#drive pre.snippet').textContent")
    assert "ttnn.copy_host_to_device_tensor(host_tokens, tokens)" in snippet
    assert "result_logits = ttnn.to_torch(logits)" in snippet


def test_a_keep_going_finding_says_so_on_the_page(browser, tmp_path):
    session, _script = build(tmp_path, "kg.db", keep_going=True)
    page = tmp_path / "kg.html"
    write_html_report(str(session), str(page))
    browser.open(page)
    text = browser.eval("document.querySelector('#findings .keep-going').textContent")
    assert text == ('seen in keep-going mode: real ttnn stops here with TT_FATAL "Reads are not'
                    ' supported during trace capture."')
