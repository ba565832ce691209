"""Shared pieces of the detector tests (the fixture that analyzes both ways is in conftest)."""

from __future__ import annotations

from ttrecord.findings import Finding
from ttrecord.testing import SessionBuilder

X, W, H, Y, Z = 0x100000, 0x100800, 0x101000, 0x101800, 0x102000  # DRAM addresses, 2 KiB apart


def shape(findings: list[Finding]) -> list[tuple]:
    return [(f.rule, f.line, f.events, f.evidence) for f in findings]


def rules_at(findings: list[Finding]) -> list[tuple[str, int | None]]:
    return sorted((f.rule, f.line) for f in findings)


def captured_step(b: SessionBuilder, release: bool = True, x_made_at: int | None = None):
    """x, w before capture; prep run; capture of h = matmul(x, w) (freed) and y = relu(h).

    Lines: 10 matmul, 11 relu, 20 begin, 21 end; `x_made_at`: the line of a `from_torch` that
    fills x before the capture. Returns (trace id, x, w, y)."""
    b.open_device()
    x, w = b.alloc(X), b.alloc(W)
    if x_made_at is not None:
        b.h2d(x, line=x_made_at, name="from_torch")
    h = b.alloc(H)
    b.op("ttnn.matmul", [x, w], [h], line=10)
    y = b.alloc(Y)
    b.op("ttnn.relu", [h], [y], line=11)
    b.free(h)
    b.free(y)
    tid = b.begin_trace(line=20)
    h = b.alloc(H)
    b.op("ttnn.matmul", [x, w], [h], line=10)
    y = b.alloc(Y)
    b.op("ttnn.relu", [h], [y], line=11)
    b.free(h)
    b.end_trace(tid, line=21)
    return tid, x, w, y


def without_layout_luck(findings: list[Finding]) -> list[Finding]:
    """The findings but the latent layout-luck infos (TR004/TR014 `layout_luck`: made while a
    trace was live, alive at its replay, clear of its memory), for tests about other rules
    whose runs keep such a tensor."""
    return [f for f in findings if "layout_luck" not in f.evidence]
