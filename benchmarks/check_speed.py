"""Time of the `ttrecord check` analysis on a million-event session, against merely reading it.

The session is a traced decode program built with `ttrecord.testing.SessionBuilder` and written
through the real writer (see `build`): half eager decode steps (input copy, ops with
intermediates allocated and freed, a readback), half replayed steps (copy in, execute_trace,
read out), with one allocation over trace memory per capture so the detectors find something.
Figures: the time to merely iterate every event (`Session.iter_events`) and the time of the
whole analysis (`ttrecord.analysis.analyze`: loading what the detectors need, then running
them), in wall-clock and CPU seconds (SQLite runs in-process, so CPU time is what the analysis
costs when other work competes for the cores). Target: analysis within 5 s.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

from ttrecord.analysis import analyze
from ttrecord.store.reader import Session
from ttrecord.events import BufferRef
from ttrecord.testing import SessionBuilder

TARGET_S = 5.0
_OPS = ("ttnn.matmul", "ttnn.add", "ttnn.rms_norm", "ttnn.softmax", "ttnn.matmul", "ttnn.silu")


def build(n_events: int, cycles: int = 20) -> SessionBuilder:
    """`cycles` rounds of: eager decode steps, a prep run and capture, replayed decode steps
    (copy the input in, execute, read the output), release. About half the events are eager
    work, half the replay loop; one allocation per cycle lands on trace memory."""
    b = SessionBuilder(file="/models/decoder.py")
    b.open_device(line=5)
    base = 0x100000
    x = b.alloc(base)
    w = b.alloc(base + 0x800, size=0x40000)
    per_cycle = n_events // cycles

    def step(line0: int) -> BufferRef:
        prev, temps = x, []
        for i, name in enumerate(_OPS):
            out = b.alloc(base + 0x41000 + 0x800 * i)
            ins = [prev, w] if "matmul" in name else [prev]
            b.op(
                name,
                ins,
                [out],
                line=line0 + i,
                args={"dim": -1} if name == "ttnn.softmax" else None,
            )
            temps.append(out)
            prev = out
        for buf in temps[:-1]:
            b.free(buf)
        return prev

    while len(b.events) < n_events:
        start = len(b.events)
        while len(b.events) - start < per_cycle // 2:  # eager steps
            b.h2d(x, line=30)
            out = step(10)
            b.d2h(out, line=20)
            b.free(out)
        out = step(10)  # prep run
        b.free(out)
        trace = b.begin_trace(line=40)
        out = step(10)
        b.end_trace(trace, line=42)
        scratch = b.alloc(base + 0x41000)  # over the trace's first intermediate: TR004
        b.execute(trace, line=44)
        b.free(scratch)
        while len(b.events) - start < per_cycle:  # replayed steps
            b.h2d(x, line=46)
            b.execute(trace, line=44)
            b.d2h(out, line=48)
        b.release(trace, line=60)
        b.free(out)
    return b


def measure(n_events: int = 1_000_000) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "decode.db"
        t0 = time.perf_counter()
        b = build(n_events)
        b.write(path, script="/models/decoder.py")
        events = len(b.events)
        del b
        build_s = time.perf_counter() - t0
        with Session.open(path) as s:
            t0 = time.perf_counter()
            n = sum(1 for _ in s.iter_events())
            iterate_s = time.perf_counter() - t0
        with Session.open(path) as s:
            t0, c0 = time.perf_counter(), time.process_time()
            findings = analyze(s)
            analyze_s, analyze_cpu_s = time.perf_counter() - t0, time.process_time() - c0
    assert n == events
    return {
        "benchmark": "check_speed",
        "events": events,
        "iterate_s": round(iterate_s, 2),
        "analyze_s": round(analyze_s, 2),
        "analyze_cpu_s": round(analyze_cpu_s, 2),  # this process only: robust to busy machines
        "findings": len(findings),
        "rules": sorted({f.rule for f in findings}),
        "target_s": TARGET_S,
        "within_target": analyze_s <= TARGET_S,
        "build_and_write_s": round(build_s, 1),
    }


def measure_captures(n_events: int = 1_000_000) -> dict:
    """The analysis of `benchmarks.synthetic`'s decode session: a capture every 50 steps (998
    captures), each baking the step number into a captured op (TR007 at one call site)."""
    from benchmarks.synthetic import cached_session

    path = cached_session(n_events)
    with Session.open(path) as s:
        t0, c0 = time.perf_counter(), time.process_time()
        findings = analyze(s)
        analyze_s, analyze_cpu_s = time.perf_counter() - t0, time.process_time() - c0
    return {
        "benchmark": "check_speed_captures",
        "analyze_s": round(analyze_s, 2),
        "analyze_cpu_s": round(analyze_cpu_s, 2),
        "findings": len(findings),
        "occurrences": sum(f.occurrences for f in findings),
        "rules": sorted({f.rule for f in findings}),
        "target_s": TARGET_S,
        "within_target": analyze_s <= TARGET_S,
    }


def main() -> list[dict]:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
    results = [measure(n), measure_captures(n)]
    for result in results:
        print(json.dumps(result))
    return results


if __name__ == "__main__":
    main()
