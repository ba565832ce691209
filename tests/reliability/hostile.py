"""A corpus of hostile strings and a session that carries them in every text column."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from ttrecord.events import SessionStatus
from ttrecord.findings import Finding, Severity
from ttrecord.testing import SessionBuilder, store_current_findings

MARKUP = ["model[fast].py", "[/]", "[bold red]loud[/]", "[@click=app.quit]quit[/]",
          "[link=https://example.com]x[/link]", ":smile:", "\\[escaped]"]  # fmt: skip
ESCAPES = ["\x1b[31mred\x1b[0m", "\x1b]0;pwned-title\x07", "\x1b]8;;http://evil\x1b\\link",
           "\x07bell", "back\x08space", "carriage\rreturn", "\x9bcsi", "nul\x00byte"]  # fmt: skip
BIDI = ["\u202eevil\u202c", "\u2066isolate\u2069", "\u200fmark"]
HUGE = "M" * (1 << 20)
CORPUS = MARKUP + ESCAPES + BIDI
FORBIDDEN = ["\x1b", "\x07", "\x08", "\x00", "\x9b", "\u202e", "\u2066", "\u200f", "\r"]
HOSTILE_FILE = "model[fast][b]\x1b]0;t\x07\u202e.py"


def build_hostile(folder: Path, name: str = "hostile.db") -> Path:
    """A session whose script, argv, error, traceback, op names, arguments, call sites and
    findings are all hostile strings."""
    text = " ".join(CORPUS)
    b = SessionBuilder(file=HOSTILE_FILE)
    b.open_device(line=1)
    x = b.alloc(0x100080)
    b.h2d(x, line=2, name="from_torch")
    y = b.alloc(0x200080)
    for i, s in enumerate(CORPUS):
        b.op(f"ttnn.{s}", [x], [y], line=3 + i, args={"label": s, s: i})
    tid = b.begin_trace(line=30)
    z = b.alloc(0x300080)
    for s in CORPUS:
        b.op(f"ttnn.{s}", [x], [z], line=31, args={"label": s})
    b.end_trace(tid, line=32)
    b.execute(tid, line=33)
    b.op("ttnn.big", [x], [y], line=40, args={"huge": HUGE})
    b.raised(f"RuntimeError: {text}")
    path = folder / name
    b.write(path, script=HOSTILE_FILE, status=SessionStatus.ERROR)
    conn = sqlite3.connect(path)
    with conn:
        conn.execute("UPDATE session SET argv = ?, error_type = ?, error_message = ?,"
                     " traceback = ?, backend_reason = ?, last_call = NULL",
                     (json.dumps([HOSTILE_FILE, *CORPUS]), "Evil[/]\x1b[2J", text + HUGE,
                      "Traceback:\n" + text, text))  # fmt: skip
    conn.close()
    store_current_findings(path, [Finding(
        rule="TR004", severity=Severity.ERROR, title=f"title {text}", message=f"message {text}",
        fix=f"fix {text}", file=HOSTILE_FILE, line=3, function=f"fn{MARKUP[1]}\x1b[5m",
        stack=[(HOSTILE_FILE, 3, "[/]")], events=[1, 2], evidence={"label": text, "n": HUGE[:5000]},
        device=0, trace=None,
    )])  # fmt: skip
    return path


def unsafe(text: str) -> list[str]:
    """The forbidden characters present in `text`."""
    return [repr(c) for c in FORBIDDEN if c in text]
