"""Recorded programs for the drift tests, written through the real writer.

`Program` plays a model the way the recorder sees it: each call is an op event, and the buffer
it allocates follows as an alloc event whose parent is that call. Addresses come from a small
first-fit allocator (DRAM bottom-up, 2 KiB pages), so an extra allocation shifts everything
after it exactly as the real allocator would.
"""

from __future__ import annotations

from pathlib import Path

from ttrecord.events import BufferRef
from ttrecord.testing import TILE_BYTES, SessionBuilder

BASE = 1 << 20


class Program:
    def __init__(self, file: str = "model.py") -> None:
        self.b = SessionBuilder(file=file)
        self.used: dict[int, int] = {}  # address -> size
        self.b.open_device()

    def _first_fit(self, size: int) -> int:
        address = BASE
        for start in sorted(self.used):
            if start - address >= size:
                break
            address = max(address, start + self.used[start])
        return address

    def call(self, name: str, line: int, inputs: list[BufferRef] = (), size: int = TILE_BYTES,
             buffer_type: str = "DRAM") -> BufferRef:  # fmt: skip
        """An op that allocates one output buffer."""
        address = self._first_fit(size)
        self.used[address] = size
        out = BufferRef(0, buffer_type, address, size, TILE_BYTES, size // TILE_BYTES)
        op = self.b.op(name, list(inputs), [out], line=line)
        self.b.alloc(address, size, buffer_type)
        self.b.events[-1].parent = op.seq
        return out

    def upload(self, line: int, size: int = TILE_BYTES) -> BufferRef:
        """`ttnn.from_torch(..., device=)`: a host-to-device transfer into a new buffer."""
        address = self._first_fit(size)
        self.used[address] = size
        out = BufferRef(0, "DRAM", address, size, TILE_BYTES, size // TILE_BYTES)
        call = self.b.h2d(out, line=line, name="ttnn.from_torch")
        self.b.alloc(address, size)
        self.b.events[-1].parent = call.seq
        return out

    def free(self, buf: BufferRef) -> None:
        self.used.pop(buf.address, None)
        self.b.free(buf)

    def step(self, x: BufferRef, w: BufferRef, extra_op: bool = False,
             skip_relu: bool = False, line0: int = 10) -> BufferRef:  # fmt: skip
        """One decode step: matmul, (optional extra add), relu, softmax; returns the output.
        `line0`: the matmul's line (a copy of the step written out elsewhere)."""
        y = self.call("ttnn.matmul", line0, [x, w])
        if extra_op:
            y2 = self.call("ttnn.add", line0 + 1, [y, w])
            self.free(y)
            y = y2
        if not skip_relu:
            z = self.call("ttnn.relu", line0 + 2, [y])
            self.free(y)
            y = z
        out = self.call("ttnn.softmax", line0 + 3, [y])
        self.free(y)
        return out

    def capture(self, x: BufferRef, w: BufferRef, keep_prep_output: bool = False,
                **step) -> BufferRef:  # fmt: skip
        """Prep run, then capture and replay of one step; the output stays live."""
        prep_output = self.step(x, w, **step)
        if not keep_prep_output:
            self.free(prep_output)
        trace = self.b.begin_trace(line=20)
        out = self.step(x, w, **step)
        self.b.end_trace(trace, line=21)
        self.b.execute(trace, line=22)
        return out

    def write(self, path: Path) -> str:
        return self.b.write(path)


def two_captures(path: Path, extra_before_second: bool) -> str:
    """One session, two captures of the same step; optionally an extra allocation (line 30)
    stays live between them."""
    p = Program()
    w = p.call("ttnn.from_torch", 3)
    x = p.call("ttnn.from_torch", 4)
    out = p.capture(x, w)
    p.b.d2h(out, line=23)
    p.free(out)
    p.b.release(0, line=24)
    if extra_before_second:
        p.call("ttnn.zeros", 30)
    p.capture(x, w)
    return p.write(path)


def one_capture(path: Path, extra_alloc: bool = False, keep_prep_output: bool = False,
                **step) -> str:  # fmt: skip
    """One session, one capture; optionally an extra allocation (line 30) before it."""
    p = Program()
    w = p.call("ttnn.from_torch", 3)
    x = p.call("ttnn.from_torch", 4)
    if extra_alloc:
        p.call("ttnn.zeros", 30)
    p.capture(x, w, keep_prep_output=keep_prep_output, **step)
    return p.write(path)


def new_input_for_capture(path: Path) -> str:
    """The prep run reads input x; the capture reads a fresh upload (line 5) instead."""
    p = Program()
    w = p.call("ttnn.from_torch", 3)
    x = p.call("ttnn.from_torch", 4)
    p.free(p.step(x, w))
    x2 = p.upload(5)
    trace = p.b.begin_trace(line=20)
    p.step(x2, w)
    p.b.end_trace(trace, line=21)
    return p.write(path)



def output_kept_between_captures(path: Path) -> str:
    """Like samples/trace_lifecycle.py: the first capture's output replaces (and frees) the
    prep run's, and is still live while the step is captured again."""
    p = Program()
    w = p.call("ttnn.from_torch", 3)
    x = p.call("ttnn.from_torch", 4)
    prep_output = p.step(x, w)
    trace = p.b.begin_trace(line=20)
    p.step(x, w)  # its output stays live
    p.b.end_trace(trace, line=21)
    p.b.execute(trace, line=22)
    p.free(prep_output)
    p.b.release(trace, line=24)
    p.capture(x, w)
    return p.write(path)


def copied_warm_up(path: Path, capture_buffer_type: str = "DRAM") -> str:
    """The warm-up is a copy of the captured statements (lines 30-33, the capture's are 10-13);
    between them its output is read back and deallocated and the input re-made (line 36, while
    the old one stays referenced). `capture_buffer_type`: where the capture's matmul writes."""
    p = Program()
    x, w = p.upload(3), p.upload(4)
    out = p.step(x, w, line0=30)
    p.b.d2h(out, line=34, name="ttnn.to_torch")
    p.b.op("ttnn.deallocate", [out], [], line=35)
    p.free(out)
    x = p.upload(36)
    trace = p.b.begin_trace(line=20)
    y = p.call("ttnn.matmul", 10, [x, w], buffer_type=capture_buffer_type)
    z = p.call("ttnn.relu", 12, [y])
    p.free(y)
    p.call("ttnn.softmax", 13, [z])
    p.free(z)
    p.b.end_trace(trace, line=21)
    p.b.execute(trace, line=22)
    return p.write(path)
