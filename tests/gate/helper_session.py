"""A session whose finding is inside a helper: a readback in `decode_step`, called from
`main` between begin and end of the capture (built with SessionBuilder, no `ttrecord run`)."""

from __future__ import annotations

from pathlib import Path

from ttrecord.events import CallSite
from ttrecord.testing import SessionBuilder

SOURCE = """\
import torch
import ttnn


def decode_step(x, w):
    h = ttnn.matmul(x, w)
    return ttnn.to_torch(h)


def main():
    device = ttnn.open_device(device_id=0)
    x = make_input(device)
    w = make_input(device)
    decode_step(x, w)
    tid = ttnn.begin_trace_capture(device, cq_id=0)
    out = decode_step(x, w)
    ttnn.end_trace_capture(device, tid, cq_id=0)
    ttnn.release_trace(device, tid)


main()
"""
HELPER_LINE, CALLER_LINE, MODULE_LINE = 7, 16, 21
X, W, H = 0x100000, 0x100800, 0x101000


KEEP_GOING_TEXT = ("TT_FATAL @ /project/tt_metal/distributed/fd_mesh_command_queue.cpp:851:"
                   " !trace_id_.has_value()\ninfo:\nReads are not supported during trace capture."
                   "\nbacktrace:\n --- ttrecord.emulator: no native backtrace (emulated device)")


def build(folder: Path, name: str = "helper.db", keep_going: bool = False) -> tuple[Path, Path]:
    """(session, script): the script written next to the session, the session stores it.
    `keep_going`: the read carries the warning the emulator issues in keep-going mode."""
    script = folder / "model.py"
    script.write_text(SOURCE)
    b = SessionBuilder(file=str(script))
    b.open_device(line=11)
    x, w = b.alloc(X), b.alloc(W)
    h = b.alloc(H)
    b.op("ttnn.matmul", [x, w], [h], line=6)
    tid = b.begin_trace(line=15)
    h2 = b.alloc(H + 0x800)
    b.op("ttnn.matmul", [x, w], [h2], line=6)
    read = b.d2h(h2, line=HELPER_LINE, name="to_torch")
    read.callsite = CallSite(str(script), HELPER_LINE, "decode_step",
                             ((str(script), CALLER_LINE, "main"), (str(script), MODULE_LINE, "<module>")))
    if keep_going:
        from ttrecord.events import Kind

        b._add(Kind.WARNING, "FatalInCapture", None, parent=read.seq,
               args={"message": KEEP_GOING_TEXT})  # fmt: skip
    b.end_trace(tid, line=17)
    b.release(tid, line=18)
    return Path(b.write(folder / name)), script
