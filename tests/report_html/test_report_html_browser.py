"""The HTML report in a real browser: headless Chromium opens the reports of recorded samples.

GIVEN a sample recorded on the emulator and its `report --html` page
WHEN Chromium opens the page from file:// (no network)
THEN the picture shows what the session says, and clicking it leads to the findings.
"""

from __future__ import annotations

import json
import struct
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.spawns



def _check_json(db: Path) -> dict:
    proc = subprocess.run([sys.executable, "-m", "ttrecord.cli.main", "check", "--format", "json",
                           str(db)], capture_output=True, text=True)  # fmt: skip
    return json.loads(proc.stdout)


def _png_size(path: Path) -> tuple[int, int]:
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", head[16:24])


def _overlap(a: dict, b: dict) -> float:
    w = min(a["right"], b["right"]) - max(a["left"], b["left"])
    h = min(a["bottom"], b["bottom"]) - max(a["top"], b["top"])
    return max(0.0, w) * max(0.0, h)


BOXES = """[...document.querySelectorAll(%r)].map((n) => {
  const r = n.getBoundingClientRect();
  return {left: r.left, right: r.right, top: r.top, bottom: r.bottom, width: r.width,
          height: r.height, data: Object.assign({}, n.dataset)};
})"""


def test_alloc_after_capture_hazard_overlaps_the_trace_range_and_clicks_to_its_finding(
    browser, sample_reports, tmp_path
):
    """TR004's buffer is outlined where the trace writes, and a click on it shows the finding."""
    page = sample_reports["alloc_after_capture"]
    expected = _check_json(page.with_suffix(".db"))["findings"]
    assert [f["id"] for f in expected] == ["TR004"]
    browser.open(page)
    assert browser.eval("window.__errors") == []

    hazards = browser.eval(BOXES % "#maps rect.hazard")
    assert [h["data"]["rule"] for h in hazards] == ["TR004"]
    hazard = hazards[0]
    assert hazard["width"] > 10 and hazard["height"] > 10  # drawn to scale, not a min-size stub
    writes = browser.eval(BOXES % "#maps rect.trace-range[data-role='writes']")
    assert writes, "the trace range the hazard sits on is not drawn"
    assert max(_overlap(hazard, w) for w in writes) > 0.25 * hazard["width"] * hazard["height"]
    # The hazard and the range are drawn in the map of the device and memory kind the finding names.
    plot = browser.eval("(() => { const p = document.querySelector('#maps rect.hazard').closest('.plot');"
                        " return [p.dataset.device, p.dataset.type]; })()")  # fmt: skip
    assert plot == [str(expected[0]["evidence"]["allocated"]["device"]),
                    expected[0]["evidence"]["allocated"]["buffer_type"]]  # fmt: skip

    assert browser.eval("document.getElementById('selection').hidden") is True
    browser.click((hazard["left"] + hazard["right"]) / 2, (hazard["top"] + hazard["bottom"]) / 2)
    panel = browser.eval("(() => { const p = document.getElementById('selection');"
                         " return {hidden: p.hidden, text: p.textContent}; })()")  # fmt: skip
    assert panel["hidden"] is False
    assert "TR004" in panel["text"]
    assert expected[0]["message"] in panel["text"]
    assert "alloc_after_capture.py:35" in panel["text"]
    selected = browser.eval("[...document.querySelectorAll('.finding.selected')].map((n) => n.id)")
    assert selected == ["finding-0"]

    shot = tmp_path / "alloc_after_capture.png"
    browser.screenshot(shot)
    assert _png_size(shot) == (browser.width, browser.height)


def test_hovering_a_buffer_names_its_call_line_and_sizes(browser, sample_reports):
    page = sample_reports["alloc_after_capture"]
    browser.open(page)
    hazard = browser.eval(BOXES % "#maps rect.hazard")[0]
    x, y = (hazard["left"] + hazard["right"]) / 2, (hazard["top"] + hazard["bottom"]) / 2
    browser.send("Input.dispatchMouseEvent", {"type": "mouseMoved", "x": x, "y": y})
    tip = browser.eval("(() => { const t = document.getElementById('tooltip'); return t.hidden ? null : t.textContent; })()")
    assert tip is not None
    assert "from_torch at alloc_after_capture.py:35" in tip
    assert "DRAM [0x101080, 0x101880) 2,048 B per bank" in tip


@pytest.mark.parametrize(
    "name", ["clean_decode", "readback_in_capture", "overlapping_traces", "crash_in_replay"]
)
def test_sample_reports_open_and_list_every_finding(browser, sample_reports, name):
    page = sample_reports[name]
    expected = _check_json(page.with_suffix(".db"))
    browser.open(page)
    assert browser.eval("window.__errors") == []
    shown = browser.eval("[...document.querySelectorAll('.finding')]"
                         ".flatMap((n) => n.dataset.findings.split(' '))")  # fmt: skip
    assert len(shown) == len(expected["findings"])
    rules = browser.eval("[...document.querySelectorAll('.finding-group')].map((n) => n.dataset.rule)")
    assert sorted(rules) == sorted({f["id"] for f in expected["findings"]})
    assert browser.eval("document.getElementById('status').textContent") == expected["status"]
    # Every buffer of the session is drawn somewhere on its map.
    drawn = browser.eval("[...document.querySelectorAll('#maps .plot')].reduce((n, p) => n + Number(p.dataset.drawn), 0)")
    import sqlite3

    with sqlite3.connect(page.with_suffix(".db")) as conn:
        assert drawn == conn.execute("SELECT count(*) FROM buffers").fetchone()[0]


def test_crash_report_names_the_call_that_died(browser, sample_reports):
    page = sample_reports["crash_in_replay"]
    browser.open(page)
    header = browser.eval("document.getElementById('run').textContent")
    assert "crashed" in header
    assert "died in execute_trace" in header


def test_session_text_renders_as_text_not_markup(browser, tmp_path):
    """A script named like markup is shown literally and never becomes an element."""
    from report_samples import SAMPLES, html_report, record

    script = tmp_path / "<img src=x onerror=alert(1)><script>.py"
    script.write_text((SAMPLES / "alloc_after_capture.py").read_text())
    page = html_report(record(script, tmp_path, name="markup"))
    browser.open(page)
    assert browser.eval("window.__errors") == []
    assert browser.eval("document.querySelectorAll('img').length") == 0
    assert browser.eval("document.querySelectorAll('script').length") == 3  # the page's own
    assert "<img src=x onerror=alert(1)><script>.py" in browser.eval("document.title")
    where = browser.eval("document.querySelector('.finding .where').textContent")
    assert where.startswith("<img src=x onerror=alert(1)><script>.py:35")


def test_a_finding_about_a_call_is_a_line_at_the_call_that_clicks_to_it(browser, sample_reports):
    """TR001 is about a readback, not a buffer: a marked line at its seq on the device's map."""
    page = sample_reports["readback_in_capture"]
    browser.open(page)
    markers = browser.eval(BOXES % "#maps path.marker")
    assert [m["data"]["finding"] for m in markers] == ["0"]
    seq = browser.eval("D.findings[0].seq")
    # The line is drawn at the finding's seq on the map's time axis.
    x = browser.eval("MAPS[0].s.px(D.findings[0].seq + 0.5)")
    plot_left = browser.eval("document.querySelector('#maps .plot').getBoundingClientRect().left")
    assert abs((markers[0]["left"] + markers[0]["right"]) / 2 - (plot_left + x)) < 1.5
    assert browser.eval(f"D.phaseChanges.filter(([s]) => s <= {seq}).pop()[1]") == 2  # in capture
    browser.click((markers[0]["left"] + markers[0]["right"]) / 2, markers[0]["top"] + 3)
    text = browser.eval("document.getElementById('selection').textContent")
    assert "TR001" in text and "readback_in_capture.py:22" in text


def test_a_long_run_is_drawn_whole_then_zoomed_with_the_wheel(browser, tmp_path):
    """Every buffer of a 20,000-event decode loop is drawn with the whole run in view (most
    thinner than a pixel, aggregated); the wheel zooms time around the cursor, a double-click
    shows everything again."""
    import sqlite3

    from report_samples import html_report

    from benchmarks.synthetic import write_session

    db = tmp_path / "decode.db"
    write_session(db, 20_000)
    with sqlite3.connect(db) as conn:
        buffers = conn.execute("SELECT count(*) FROM buffers").fetchone()[0]
    browser.open(html_report(db))
    assert browser.eval("window.__errors") == []
    drawn = lambda: int(browser.eval("document.querySelector('#maps .plot').dataset.drawn"))  # noqa: E731
    assert drawn() == buffers > 5000
    span = lambda: browser.eval("VIEW.x1 - VIEW.x0")  # noqa: E731
    full = span()
    box = browser.eval(BOXES % "#maps .plot canvas")[0]
    x, y = (box["left"] + box["right"]) / 2, (box["top"] + box["bottom"]) / 2
    for _ in range(6):
        browser.send("Input.dispatchMouseEvent", {"type": "mouseWheel", "x": x, "y": y, "deltaX": 0, "deltaY": -400})
    browser.eval("new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))")
    assert span() < full / 20
    assert 0 < drawn() < buffers / 10
    browser.send("Input.dispatchMouseEvent", {"type": "mousePressed", "x": x, "y": y, "button": "left", "clickCount": 2})
    browser.send("Input.dispatchMouseEvent", {"type": "mouseReleased", "x": x, "y": y, "button": "left", "clickCount": 2})
    browser.eval("new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))")
    assert span() == full and drawn() == buffers
