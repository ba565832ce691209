"""`ttrecord report --html` at scale: build time, file size, and time to open in Chromium.

Two sessions: the shared million-event decode loop (`synthetic.cached_session`, ~300,000
buffers, ~1,000 traces), and a model-sized memory picture of 5,000 buffers live at once (weights
and caches of many sizes) under a 100,000-event decode loop. For each:
- build_s: `build_payload` + page, from the session file to the bytes written;
- size_mb: the HTML file (target for 1M events: at most 20 MB);
- open_s: headless Chromium, from navigation to the page saying it has drawn everything
  (parse, decode, first draw of every plot; target for 1M events: at most 3 s);
- ready_ms: the page's own performance.now() at that point;
- redraw_ms / redraw_zoomed_ms: one redraw of every plot with the whole run in view, and
  zoomed to a 2,000-event window (what a wheel or drag costs).
Chromium is the Debian `chromium` (scripts/chromium); without it the browser figures are null.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.synthetic import cached_session
from ttrecord.events import BufferRef, CallSite, Event, Kind, Phase, SessionStatus, TensorRef
from ttrecord.report.html import page
from ttrecord.report.html_data import build_payload
from ttrecord.store.reader import Session
from ttrecord.store.writer import SessionWriter

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "report_html"))
from report_browser import Browser, find_chromium  # noqa: E402

OPEN_TARGET_S = 3.0
SIZE_TARGET_MB = 20.0
_FILE = "/models/llama.py"


def _live_events(n_live: int, n_events: int):
    """n_live buffers allocated up front (sizes 2 KB to 4 MB), then a traced decode loop."""
    seq = 0
    site = CallSite(_FILE, 10, "forward")

    def ev(kind, name, **kw):
        nonlocal seq
        seq += 1
        return Event(seq, kind, name, t_ns=seq * 1000, dur_ns=500, device=0, callsite=site, **kw)

    yield ev(Kind.DEVICE_OPEN, "open_device", args={"num_dram_banks": 8, "num_l1_banks": 130})
    address = 0x100000
    for i in range(n_live):
        size = 2048 << (i % 12)
        yield ev(Kind.ALLOC, "alloc", buffer=BufferRef(0, "DRAM", address, size, 2048, size // 2048, i))
        address += size
    base, step, trace = address, 0, 0
    while seq < n_events:
        step += 1
        capture = step % 40 == 0
        phase = Phase.CAPTURE if capture else Phase.EAGER
        if capture:
            yield ev(Kind.TRACE_BEGIN, "begin_trace_capture", trace=trace)
        temps = []
        for k in range(6):
            buf = BufferRef(0, "DRAM", base + 4096 * k, 4096, 2048, 2)
            yield ev(Kind.ALLOC, "alloc", buffer=buf, phase=phase)
            ref = TensorRef(None, "device", (1, 32, 64), "BFLOAT16", "TILE", "DRAM", buf)
            yield ev(Kind.OP, "ttnn.matmul", phase=phase, trace=trace if capture else None, outputs=(ref,))
            temps.append(buf)
        for buf in temps:
            yield ev(Kind.FREE, "free", buffer=buf, phase=phase)
        if capture:
            yield ev(Kind.TRACE_END, "end_trace_capture", trace=trace)
            yield ev(Kind.TRACE_EXECUTE, "execute_trace", trace=trace, phase=Phase.REPLAY)
            yield ev(Kind.TRACE_RELEASE, "release_trace", trace=trace)
            trace += 1


def live_session(n_live: int = 5000, n_events: int = 100_000) -> Path:
    path = Path(tempfile.gettempdir()) / "ttrecord-bench" / f"live-{n_live}-{n_events}.db"
    if path.exists():
        return path
    path.parent.mkdir(exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.unlink(missing_ok=True)
    writer = SessionWriter(tmp)
    writer.start(script=_FILE, argv=[_FILE], backend="emulator")
    batch = []
    for e in _live_events(n_live, n_events):
        batch.append(e)
        if len(batch) >= 5000:
            writer.add(batch)
            batch.clear()
    writer.add(batch)
    writer.finish(SessionStatus.OK, exit_code=0)
    writer.close()
    tmp.rename(path)
    return path


REDRAW = "(() => { const t = performance.now(); for (const p of PLOTS) p.draw(); return performance.now() - t; })()"
ZOOM = "(() => { VIEW.x0 = VIEW.full[1] / 2; VIEW.x1 = VIEW.x0 + 2000; return 0; })()"


def measure(name: str, session: Path, out: Path, browser: Browser | None) -> dict:
    t = time.perf_counter()
    with Session.open(session) as s:
        payload = build_payload(s)
        events = payload["lastSeq"]
    out.write_text(page(payload), encoding="utf-8")
    row = {"benchmark": "html_report", "session": name, "events": events,
           "buffers": sum(m["n"] for m in payload["maps"]),
           "build_s": round(time.perf_counter() - t, 2),
           "size_mb": round(out.stat().st_size / 1e6, 2)}  # fmt: skip
    if browser is not None:
        opens = []
        for _ in range(3):
            browser.open(out, timeout=120)
            opens.append(browser.opened_s)
        row["open_s"] = round(min(opens), 2)
        row["open_max_s"] = round(max(opens), 2)
        row["ready_ms"] = browser.eval("Number(document.documentElement.dataset.readyMs)")
        row["redraw_ms"] = round(min(browser.eval(REDRAW) for _ in range(5)), 1)
        browser.eval(ZOOM)
        row["redraw_zoomed_ms"] = round(min(browser.eval(REDRAW) for _ in range(5)), 1)
        row["errors"] = browser.eval("window.__errors.length")
    return row


def main() -> None:
    binary = find_chromium()
    browser = Browser(binary) if binary else None
    folder = Path(tempfile.mkdtemp(prefix="ttrecord-html-"))
    try:
        big = measure("decode-1M", cached_session(1_000_000), folder / "decode.html", browser)
        big["open_target_s"], big["size_target_mb"] = OPEN_TARGET_S, SIZE_TARGET_MB
        if "open_s" in big:
            big["within_target"] = big["open_s"] <= OPEN_TARGET_S and big["size_mb"] <= SIZE_TARGET_MB
        print(json.dumps(big), flush=True)
        print(json.dumps(measure("live-5000", live_session(), folder / "live.html", browser)), flush=True)
    finally:
        if browser is not None:
            browser.close()


if __name__ == "__main__":
    main()
