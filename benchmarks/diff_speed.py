"""Speed of `ttrecord diff` on two captures of 100,000 ops each (target: under 3 s).

Both sessions are built with `ttrecord.testing.SessionBuilder` through the real writer, in the
recorder's event order (each call, then the allocation it made as its child): a captured loop
of ops over 8 call sites whose intermediates rotate through 64 live buffers.
Run B keeps one extra buffer live before its capture (every intermediate shifts by 2 KiB) and
differs by 5 inserted and 5 removed ops, so the alignment has real work to do. Figures: the
time to read both captures through the reader, the diff itself (alignment, comparison,
cause, drift summary, replay overlaps) and the alignment's share of it; wall and CPU time,
since the CPU time is what a busy shared machine does not distort. Sessions are cached
under the temp folder because building them takes longer than diffing them.

`edited_*`: the alignment alone on 300,000 ops held in memory, where B is A after a code edit
(one line inserted above the loop: every call site one line lower) plus 5 inserted and 5
removed ops; the call-site keys no longer match, so this times the signature alignment.
"""

from __future__ import annotations

import gc
import json
import sys
import time
from pathlib import Path

from benchmarks.synthetic import bench_folder
from ttrecord.analysis.drift import align, diff_captures, load_capture
from ttrecord.analysis.drift.model import CapturedOp, Tensor
from ttrecord.analysis.drift.signature import align_ops
from ttrecord.store.reader import Session
from ttrecord.events import BufferRef
from ttrecord.testing import TILE_BYTES, SessionBuilder

N_OPS = 100_000
TARGET_S = 3.0
_VERSION = 3  # bump when the sessions' shape changes
_LINES = (10, 11, 12, 13, 14, 15, 16, 17)
_NAMES = ("ttnn.matmul", "ttnn.add", "ttnn.rms_norm", "ttnn.matmul", "ttnn.softmax",
          "ttnn.matmul", "ttnn.silu", "ttnn.mul")  # fmt: skip
_INSERT_AT = (1_000, 25_000, 50_000, 75_000, 99_000)
_REMOVE_AT = (10_000, 35_000, 60_000, 85_000, 95_000)


def _call(b: SessionBuilder, name: str, line: int, inputs: list, address: int) -> BufferRef:
    """An op that allocates its output, in the recorder's order: the call, then its alloc."""
    out = BufferRef(0, "DRAM", address, TILE_BYTES, TILE_BYTES, 1)
    op = b.op(name, inputs, [out], line=line)
    b.alloc(address)
    b.events[-1].parent = op.seq
    return out


def build(path: Path, n_ops: int, variant: bool) -> str:
    b = SessionBuilder(file="/models/decoder.py")
    b.open_device()
    base = 1 << 20
    weights = [_call(b, "ttnn.from_torch", 3, [], base + i * TILE_BYTES) for i in range(16)]
    x = _call(b, "ttnn.from_torch", 4, [], base + 16 * TILE_BYTES)
    first = base + 17 * TILE_BYTES
    if variant:  # the extra buffer that shifts the capture's layout
        _call(b, "ttnn.zeros", 30, [], first)
        first += TILE_BYTES
    ring: list = [None] * 64
    trace = b.begin_trace(line=20)
    cur = x
    for i in range(n_ops):
        if variant and i in _REMOVE_AT:
            continue
        slot = i % 64
        if ring[slot] is not None:
            b.free(ring[slot])
        cur = ring[slot] = _call(b, _NAMES[i % 8], _LINES[i % 8], [cur, weights[i % 16]],
                                 first + slot * TILE_BYTES)  # fmt: skip
        if variant and i in _INSERT_AT:
            b.op("ttnn.add", [cur, weights[0]], [cur], line=40)
    b.end_trace(trace, line=21)
    b.execute(trace, line=22)
    b.release(trace, line=23)
    return b.write(path)


def sessions(n_ops: int) -> tuple[Path, Path]:
    folder = bench_folder()
    paths = []
    for variant in (False, True):
        path = folder / f"diff_v{_VERSION}_{n_ops}_{'b' if variant else 'a'}.db"
        if not path.exists():
            tmp = path.with_suffix(".tmp")
            tmp.unlink(missing_ok=True)
            build(tmp, n_ops, variant)
            tmp.rename(path)
        paths.append(path)
    return paths[0], paths[1]


def measure(n_ops: int = N_OPS) -> dict:
    path_a, path_b = sessions(n_ops)
    gc.disable()  # as diff_targets does (ttrecord diff, the UI)
    t0, c0 = time.perf_counter(), time.process_time()
    with Session.open(path_a) as sa, Session.open(path_b) as sb:
        a, b = load_capture(sa, 1), load_capture(sb, 1)
    read_s, read_cpu = time.perf_counter() - t0, time.process_time() - c0
    t0, c0 = time.perf_counter(), time.process_time()
    report = diff_captures(a, b)
    diff_s, diff_cpu = time.perf_counter() - t0, time.process_time() - c0
    t0, c0 = time.perf_counter(), time.process_time()
    method = align_ops(a.ops, b.ops).method
    align_s, align_cpu = time.perf_counter() - t0, time.process_time() - c0
    edited = measure_edited(EDITED_OPS)
    gc.enable()
    counts = {str(s): report.count(s) for s in type(report.pairs[0].status)}
    return {
        "benchmark": "diff_speed",
        "ops_a": len(a.ops),
        "ops_b": len(b.ops),
        "diff_s": round(diff_s, 3),
        "align_s": round(align_s, 3),
        "align_cpu_s": round(align_cpu, 3),
        "align_share": round(align_cpu / diff_cpu, 3),  # of the diff's CPU time
        "diff_cpu_s": round(diff_cpu, 3),
        "read_both_s": round(read_s, 3),
        "read_both_cpu_s": round(read_cpu, 3),
        "total_s": round(read_s + diff_s, 3),
        "target_s": TARGET_S,
        "method": method,
        "only_a": counts["only_a"],
        "only_b": counts["only_b"],
        "changed": counts["changed"],
        "cause_line": report.cause.difference.live.line if report.cause else None,
        **edited,
    }


EDITED_OPS = 300_000


def _edited_ops(n_ops: int, variant: bool) -> list[CapturedOp]:
    """A captured loop in memory (no session): B's call sites are one line lower."""
    shift = 1 if variant else 0
    tensors = [(Tensor("device", "[1,32,1024]", "BFLOAT16", "TILE", "DRAM", "DRAM",
                       (1 << 20) + k * TILE_BYTES, TILE_BYTES, 0),) for k in range(64)]  # fmt: skip
    ops: list[CapturedOp] = []
    for i in range(n_ops):
        if variant and i in _REMOVE_AT:
            continue
        ops.append(CapturedOp(i, len(ops), _NAMES[i % 8], "/models/decoder.py",
                              _LINES[i % 8] + shift, "forward", tensors[i % 64],
                              tensors[(i + 1) % 64]))  # fmt: skip
        if variant and i in _INSERT_AT:
            ops.append(CapturedOp(i, len(ops), "ttnn.add", "/models/decoder.py", 40, "forward",
                                  tensors[0], tensors[0]))  # fmt: skip
    return ops


def measure_edited(n_ops: int) -> dict:
    a, b = _edited_ops(n_ops, False), _edited_ops(n_ops, True)
    c0 = time.process_time()
    alignment = align_ops(a, b)
    cpu = time.process_time() - c0
    kinds = [kind for _, _, kind in alignment.rows]
    c0 = time.process_time()
    keyed, _ = align([op.key for op in a], [op.key for op in b])
    key_cpu = time.process_time() - c0
    return {
        "edited_ops": n_ops,
        "edited_align_cpu_s": round(cpu, 3),
        "edited_method": alignment.method,
        "edited_by_signature": kinds.count("signature") + kinds.count("exact"),
        "edited_unmatched": kinds.count(""),
        "edited_call_site_only_align_cpu_s": round(key_cpu, 3),
        "edited_call_site_only_unmatched": sum(1 for i, j in keyed if i is None or j is None),
    }


def main() -> list[dict]:
    result = measure(int(sys.argv[1]) if len(sys.argv) > 1 else N_OPS)
    print(json.dumps(result))
    return [result]


if __name__ == "__main__":
    main()
