"""`ttrecord report --html`: the run as one self-contained HTML page.

The page carries its data, script and styles inline (no network, opens from `file://`): a
zoomable memory map per device and memory kind, a timeline of phases, captures and replays,
the findings with their source, and the run's status. The pictures are drawn with plain
canvas and SVG written here (see docs/html-report.md for why no charting library).

Everything from the session is data: it travels as JSON inside a `<script type=
"application/json">` block with `<`, `>` and `&` escaped, so no file name or message can close
the block, and the page's script puts text into the document only through `textContent`.
"""

from __future__ import annotations

import html
import json
from importlib import resources
from pathlib import Path
from typing import Any

from ttrecord.report.html_data import build_payload
from ttrecord.store.reader import Session

_SCRIPTS = ("plot.js", "memmap.js", "report.js")  # in this order: each uses the ones before


def _asset(name: str) -> str:
    return (resources.files("ttrecord.report") / "assets" / name).read_text(encoding="utf-8")


def embed_json(payload: Any) -> str:
    """JSON safe inside a `<script>` element: `<`, `>`, `&` as \\u escapes (valid JSON)."""
    text = json.dumps(payload, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return (text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
            .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))  # fmt: skip


def page(payload: dict[str, Any]) -> str:
    """The whole page for a payload from `build_payload`."""
    info = payload["info"]
    title = f"ttrecord · {Path(info['script'] or info['path']).name} · {info['status']}"
    parts = _asset("report.html").split("@@")
    fill = {
        "TITLE": html.escape(title),
        "STYLE": _asset("report.css"),
        "SCRIPT": "\n".join(_asset(name) for name in _SCRIPTS),
        "DATA": embed_json(payload),
    }
    # Markers sit at odd positions of the split, so nothing inserted is ever scanned again.
    return "".join(fill[p] if i % 2 else p for i, p in enumerate(parts))


def write_html_report(session_path: str, out_path: str) -> int:
    """Write the report of a session to `out_path`; returns the bytes written."""
    with Session.open(session_path) as session:
        payload = build_payload(session)
    data = page(payload).encode("utf-8")
    Path(out_path).write_bytes(data)
    return len(data)
