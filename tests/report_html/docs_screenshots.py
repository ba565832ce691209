"""Regenerates the screenshots in docs/ (docs/html-report.md shows them).

    .venv/bin/python tests/report_html/docs_screenshots.py

Records samples/alloc_after_capture.py on the emulator, writes its HTML report and the report
of the benchmarks' million-event decode loop, opens both in headless Chromium and saves PNGs.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path[:0] = [str(HERE), str(ROOT)]

from report_samples import SAMPLES, html_report, record  # noqa: E402
from report_browser import Browser, find_chromium  # noqa: E402

from benchmarks.synthetic import cached_session  # noqa: E402

DOCS = ROOT / "docs"
CENTER = "(el) => { const r = el.getBoundingClientRect(); return [r.left + r.width / 2, r.top + r.height / 2]; }"


def main() -> None:
    binary = find_chromium()
    if binary is None:
        sys.exit("chromium is not installed (scripts/chromium installs it)")
    folder = Path(tempfile.mkdtemp(prefix="ttrecord-shots-"))
    small = html_report(record(SAMPLES / "alloc_after_capture.py", folder))
    big_db = folder / "decode.db"
    big_db.symlink_to(cached_session(1_000_000))
    big = html_report(big_db)
    browser = Browser(binary, width=1280, height=900)
    try:
        browser.open(small)
        x, y = browser.eval(f"({CENTER})(document.querySelector('#maps rect.hazard'))")
        browser.click(x, y)
        browser.screenshot(DOCS / "html-report-hazard.png")
        browser.open(big)
        browser.eval("window.scrollTo(0, 0)")
        browser.screenshot(DOCS / "html-report-1m-overview.png")
        # Zoom to one capture and its replay, and to the addresses the step allocates on.
        browser.eval("(() => { const t = D.traces[500]; VIEW.x0 = t.begin - 60; VIEW.x1 = t.release + 60;"
                     " const m = MAPS[0]; m.y0 = m.scale.total * 0.62; m.y1 = m.scale.total * 1.01;"
                     " redrawAll(); })()")  # fmt: skip
        browser.eval("new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))")
        browser.screenshot(DOCS / "html-report-1m-zoomed.png")
    finally:
        browser.close()
    print(f"wrote {DOCS}/html-report-*.png")


if __name__ == "__main__":
    main()
