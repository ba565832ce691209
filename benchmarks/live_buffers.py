"""What recording adds per op as the number of live device buffers grows, on both backends.

A real model keeps thousands of buffers alive (weights, KV caches). For 10, 100, 1,000 and
5,000 extra live buffers this times the add/relu/multiply loop bare, recorded (call sites at
depth 2, as `ttrecord run`), recorded without call sites, and recorded with the allocator's
full view diffed before and after every call (`per_call_snapshots`: the previous design, the
"before" curve, measured in the same run). Then, at 5,000 live buffers: loading 4,000 weight
tensors bare and recorded, and the calls of a replay loop (`copy_host_to_device_tensor`,
`execute_trace`, reading the output with `from_device`) bare and recorded (`execute_trace` on
the emulator only: it segfaults on the mock device).

Times are CPU time of this thread, medians of interleaved rounds; the emulator runs with one
torch thread (two intra-op threads spin under load). Real ttnn runs in the real-ttnn lane's
python (tests/realttnn/setup), in its own process, when the lane is set up.
Run: python -m benchmarks.live_buffers [--backend emulator|ttnn] [--rounds R]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

from benchmarks.alternatives import (
    OPS_PER_ITERATION,
    emulator_backend,
    lane_python,
    op_loop,
    real_ttnn_backend,
    recorded_ttnn,
)

LIVE = (10, 100, 1000, 5000)
WEIGHTS = 4000
_clock = time.thread_time_ns


def _per_call_us(run: Callable[[], None], calls: int) -> float:
    start = _clock()
    run()
    return (_clock() - start) / calls / 1000.0


def _tile(b: Any, value: float = 1.0) -> Any:
    raw = b.raw
    if b.name == "emulator":
        import torch

        return raw.from_torch(torch.full((32, 32), value), dtype=raw.bfloat16,
                              layout=raw.TILE_LAYOUT, device=b.dev)  # fmt: skip
    import numpy as np

    return raw.Tensor(np.full((32, 32), value, dtype=np.float32), raw.bfloat16, b.dev,
                      raw.TILE_LAYOUT, raw.DRAM_MEMORY_CONFIG)  # fmt: skip


def _host_tile(b: Any) -> Any:
    raw = b.raw
    if b.name == "emulator":
        import torch

        return raw.from_torch(torch.ones(32, 32), dtype=raw.bfloat16, layout=raw.TILE_LAYOUT)
    import numpy as np

    return raw.Tensor(np.ones((32, 32), dtype=np.float32), raw.bfloat16).to(raw.TILE_LAYOUT)


def curve(b: Any, tmp: str, rounds: int, iterations: int) -> dict:
    """Added µs per op at each live-buffer count, for each recorder variant."""
    out: dict[str, Any] = {}
    keep: list = []
    for live in LIVE:
        keep += [_tile(b) for _ in range(live - len(keep))]
        variants: dict[str, Any] = {"bare": (b.raw, None)}
        for name, sites in (("callsites", True), ("no_callsites", False), ("snapshots", True)):
            tag = f"{live}{name}"
            module, recorder = recorded_ttnn(b.raw, b.dev, tmp, callsites=sites, tag=tag)
            if name == "snapshots":
                recorder.per_call_snapshots = True  # the previous design
            variants[name] = (module, recorder)
        samples: dict[str, list[float]] = {name: [] for name in variants}
        for module, _ in variants.values():  # warm caches (call sites, tensor metadata)
            op_loop(module, b.x, 3)
        for _ in range(rounds):
            for name, (module, _) in variants.items():
                # the old design costs milliseconds per op at thousands of buffers: fewer calls
                n = max(3, iterations // 10) if name == "snapshots" and live >= 1000 else iterations
                samples[name].append(_per_call_us(lambda m=module, n=n: op_loop(m, b.x, n),
                                                  n * OPS_PER_ITERATION))  # fmt: skip
        med = {name: statistics.median(v) for name, v in samples.items()}
        out[f"bare_us_{live}"] = round(med["bare"], 2)
        for name in ("callsites", "no_callsites", "snapshots"):
            out[f"added_us_{name}_{live}"] = round(med[name] - med["bare"], 2)
        for _, recorder in variants.values():
            if recorder is not None:
                recorder.unwatch()
    base, top = out["added_us_callsites_10"], out["added_us_callsites_5000"]
    out["ratio_5000_vs_10"] = round(top / base, 2) if base > 0 else None
    before = out["added_us_snapshots_5000"] / max(out["added_us_snapshots_10"], 1e-9)
    out["before_ratio_5000_vs_10"] = round(before, 1)
    out["_keep"] = keep
    return out


def weight_loading(b: Any, tmp: str, rounds: int) -> dict:
    """Loading WEIGHTS tensors onto the device, bare and recorded (created, then dropped)."""
    module, recorder = recorded_ttnn(b.raw, b.dev, tmp, callsites=True, tag="weights")
    bare_b = type("B", (), {"name": b.name, "raw": b.raw, "dev": b.dev})()
    rec_b = type("B", (), {"name": b.name, "raw": module, "dev": b.dev})()
    samples: dict[str, list[float]] = {"bare": [], "recorded": []}
    for _ in range(rounds):
        for name, bb in (("bare", bare_b), ("recorded", rec_b)):
            start = _clock()
            weights = [_tile(bb, 0.5) for _ in range(WEIGHTS)]
            samples[name].append((_clock() - start) / 1e9)
            del weights
    recorder.unwatch()
    bare, rec = statistics.median(samples["bare"]), statistics.median(samples["recorded"])
    return {"weights": WEIGHTS, "bare_s": round(bare, 3), "recorded_s": round(rec, 3),
            "ratio": round(rec / bare, 2), "target_ratio": 1.5, "within_target": rec / bare <= 1.5}


def replay_loop(b: Any, tmp: str, rounds: int, n: int = 300) -> dict:
    """The calls of a replay loop at 5,000 live buffers: new input copied into the captured
    one, execute_trace (emulator only), the output read; bare and recorded, µs per call."""
    raw = b.raw
    module, recorder = recorded_ttnn(raw, b.dev, tmp, callsites=True, tag="replay")
    host = _host_tile(b)
    captured = _tile(b)
    figures: dict[str, Any] = {}
    calls: dict[str, tuple[Callable, Callable]] = {
        "copy_host_to_device_tensor": (lambda: raw.copy_host_to_device_tensor(host, captured),
                                       lambda: module.copy_host_to_device_tensor(host, captured)),
    }  # fmt: skip
    if b.name == "emulator":
        out = raw.relu(captured)
        tid = raw.begin_trace_capture(b.dev, cq_id=0)
        out = raw.relu(captured)
        raw.end_trace_capture(b.dev, tid, cq_id=0)
        calls["execute_trace"] = (lambda: raw.execute_trace(b.dev, tid, cq_id=0, blocking=True),
                                  lambda: module.execute_trace(b.dev, tid, cq_id=0, blocking=True))
    else:
        out = captured
    calls["from_device"] = (lambda: raw.from_device(out), lambda: module.from_device(out))
    recorder.allocations.reconcile()
    for name, (bare, recorded) in calls.items():
        samples: dict[str, list[float]] = {"bare": [], "recorded": []}
        for _ in range(rounds):
            for tag, fn in (("bare", bare), ("recorded", recorded)):
                samples[tag].append(_per_call_us(lambda f=fn: [f() for _ in range(n)], n))
        figures[f"{name}_us"] = round(statistics.median(samples["bare"]), 2)
        figures[f"{name}_added_us"] = round(statistics.median(samples["recorded"])
                                            - statistics.median(samples["bare"]), 2)  # fmt: skip
    if b.name == "emulator":
        raw.release_trace(b.dev, tid)
    recorder.unwatch()
    return figures


def measure(backend: str, rounds: int) -> list[dict]:
    if backend == "emulator":
        import torch

        torch.set_num_threads(1)
        b, iterations = emulator_backend(), 200
    else:
        b, iterations = real_ttnn_backend(), 60
    tmp = tempfile.mkdtemp(prefix="ttrecord-bench-")
    try:
        figures = curve(b, tmp, rounds, iterations)
        keep = figures.pop("_keep")  # noqa: F841 - 5,000 live buffers for what follows
        weights = weight_loading(b, tmp, max(3, rounds // 2))
        replay = replay_loop(b, tmp, rounds)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    figures["target_ratio"] = 1.2
    figures["within_target"] = (figures["ratio_5000_vs_10"] or 99) <= 1.2
    suffix = "" if backend == "emulator" else "_real_ttnn"
    replay["live_buffers"] = LIVE[-1]
    weights["live_buffers"] = LIVE[-1]
    return [{"benchmark": f"live_buffers{suffix}", "backend": backend, **figures},
            {"benchmark": f"weight_loading{suffix}", "backend": backend, **weights},
            {"benchmark": f"replay_loop{suffix}", "backend": backend, **replay}]


def measure_real_ttnn(rounds: int) -> list[dict]:
    lane = lane_python()
    if isinstance(lane, str):
        return [{"benchmark": "live_buffers_real_ttnn", "skipped": lane}]
    python, env = lane
    argv = [python, "-m", "benchmarks.live_buffers", "--backend", "ttnn", "--rounds", str(rounds)]
    with tempfile.TemporaryDirectory() as cwd:  # ttnn writes generated/ into the cwd
        try:
            proc = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True,
                                  timeout=500)  # fmt: skip
        except subprocess.TimeoutExpired:
            return [{"benchmark": "live_buffers_real_ttnn", "skipped": "timed out"}]
    rows = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    if proc.returncode != 0 or not rows:
        last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        return [{"benchmark": "live_buffers_real_ttnn", "skipped": f"failed: {last}"}]
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=("emulator", "ttnn", "both"), default="both")
    parser.add_argument("--rounds", type=int, default=5)
    opts = parser.parse_args()
    rows = []
    if opts.backend in ("emulator", "both"):
        rows += measure("emulator", opts.rounds)
    if opts.backend == "ttnn":
        rows += measure("ttnn", opts.rounds)
    elif opts.backend == "both":
        rows += measure_real_ttnn(opts.rounds)
    for row in rows:
        print(json.dumps(row), flush=True)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
