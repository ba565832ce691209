"""Session files the UI tests open, built through the real writer with SessionBuilder."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from ttrecord.events import SessionStatus
from ttrecord.findings import Finding, Severity
from ttrecord.testing import TILE_BYTES, SessionBuilder, store_current_findings

SCRIPT = "alloc_after_capture.py"
SCRIPT_TEXT = '''import torch
import ttnn

device = ttnn.open_device(device_id=0, trace_region_size=1 << 20)
x = ttnn.from_torch(torch.rand(32, 32), layout=ttnn.TILE_LAYOUT, device=device)
w = ttnn.from_torch(torch.rand(32, 32), layout=ttnn.TILE_LAYOUT, device=device)


def step(x):
    h = ttnn.matmul(x, w)
    return ttnn.relu(h)


step(x)  # compile run
tid = ttnn.begin_trace_capture(device, cq_id=0)
y = step(x)
ttnn.end_trace_capture(device, tid, cq_id=0)
scratch = ttnn.from_torch(torch.zeros(32, 32), layout=ttnn.TILE_LAYOUT, device=device)
ttnn.execute_trace(device, tid, cq_id=0, blocking=True)
print(ttnn.to_torch(scratch))
ttnn.release_trace(device, tid)
'''
OFFENDING_LINE = 18
X, W, H, Y_EAGER, Y_CAPTURE = (0x100080 + i * TILE_BYTES for i in range(5))
STARTED_AT = 1_780_000_000.0  # fixed so snapshots do not change with the clock


def build_alloc_after_capture(folder: Path, name: str = "alloc_after_capture.db") -> Path:
    """A capture whose freed intermediate is reused by a buffer allocated after capture.

    `scratch` (line 18) lands on the address trace 0 writes `h` to on replay, so
    execute_trace overwrites it: a TR004 finding, written by hand in the analysis' shape so the
    UI tests do not move with the analysis' wording (test_tui_recorded_sample covers that).
    """
    (folder / SCRIPT).write_text(SCRIPT_TEXT)
    b = SessionBuilder(file=SCRIPT)
    b.open_device(line=4)
    x = b.alloc(X)
    b.h2d(x, line=5, name="from_torch")
    w = b.alloc(W)
    b.h2d(w, line=6, name="from_torch")
    h = b.alloc(H)
    b.op("ttnn.matmul", [x, w], [h], line=10)
    y = b.alloc(Y_EAGER)
    b.op("ttnn.relu", [h], [y], line=11)
    b.free(h)
    tid = b.begin_trace(line=15)
    h = b.alloc(H)
    capture_matmul = b.op("ttnn.matmul", [x, w], [h], line=10)
    y2 = b.alloc(Y_CAPTURE)
    b.op("ttnn.relu", [h], [y2], line=11)
    b.free(h)
    b.end_trace(tid, line=17)
    scratch = b.alloc(H)
    alloc_seq = b.events[-1].seq
    b.h2d(scratch, line=OFFENDING_LINE, name="from_torch")
    execute = b.execute(tid, line=19)
    b.d2h(scratch, line=20)
    b.release(tid, line=21)
    path = folder / name
    b.write(path, script=SCRIPT)
    freeze_times(path)
    store_current_findings(path, [alloc_after_capture_finding(alloc_seq, execute.seq, capture_matmul.seq)])
    return path


def _range(address: int, size: int = TILE_BYTES, **extra) -> dict:
    return {"device": 0, "buffer_type": "DRAM", "address": f"{address:#x} ({address})",
            "size": f"{size:#x} ({size})", "range": f"[{address:#x}, {address + size:#x})", **extra}  # fmt: skip


def alloc_after_capture_finding(alloc_seq: int, execute_seq: int, capture_seq: int) -> Finding:
    return Finding(
        rule="TR004",
        severity=Severity.ERROR,
        title="Allocation over trace memory",
        message=(
            f"`from_torch` allocates DRAM [{H:#x}, {H + TILE_BYTES:#x}) after trace 0 was captured,"
            " over memory the trace writes on replay: execute_trace overwrites it."
        ),
        fix="Allocate this tensor before begin_trace_capture, or release the trace first.",
        file=SCRIPT,
        line=OFFENDING_LINE,
        function="<module>",
        stack=[(SCRIPT, OFFENDING_LINE, "<module>")],
        events=[alloc_seq + 1, alloc_seq, execute_seq, capture_seq],
        evidence={
            "allocated": _range(H),
            "trace_ranges": [_range(H, used_by=["written by `ttnn.matmul` at line 10"])],
            "trace": 0,
            "execute": {"event": execute_seq, "at": f"{SCRIPT}:19"},
        },
        device=0,
        trace=0,
    )


def freeze_times(path: Path, status: SessionStatus | None = None) -> None:
    conn = sqlite3.connect(path)
    with conn:
        conn.execute("UPDATE session SET started_at = ?, ended_at = ?, host = 'host', cwd = '.'",
                     (STARTED_AT, STARTED_AT + 2))  # fmt: skip
        if status is not None:
            conn.execute("UPDATE session SET status = ?", (str(status),))
    conn.close()


def build_decode_loop(folder: Path, steps: int, name: str = "decode.db") -> Path:
    """Many eager steps, one capture, then replays: a few thousand events of a real shape."""
    b = SessionBuilder(file="decode.py")
    b.open_device(line=1)
    x = b.alloc(X)
    w = b.alloc(W)
    for step in range(steps):
        capture = step == steps // 2
        if capture:
            tid = b.begin_trace(line=9)
        else:
            b.h2d(x, line=3)
        h = b.alloc(H)
        b.op("ttnn.matmul", [x, w], [h], line=4)
        y = b.alloc(Y_EAGER)
        b.op("ttnn.relu", [h], [y], line=5)
        b.free(h)
        if capture:
            b.end_trace(tid, line=10)
            b.execute(tid, line=11)
        else:
            b.d2h(y, line=6)
        b.free(y)
    path = folder / name
    b.write(path, script="decode.py")
    freeze_times(path)
    return path


def build_empty(folder: Path, name: str = "empty.db", status: SessionStatus = SessionStatus.OK) -> Path:
    path = folder / name
    SessionBuilder(file="nothing.py").write(path, script="nothing.py")
    freeze_times(path, status)
    return path
