"""ttrecord's recording against what else a ttnn user could run to see the same loop.

One small emulator op loop (add, relu, multiply on 32x32 bf16 tiles: each op allocates its
output and frees the previous one, as in a model) is timed four ways in this one process:
  bare         the emulator alone;
  ttrecord     through the recorder's module proxy, call sites at the default depth 2 (and
               without call sites), writing its event log as in `ttrecord run`;
  setprofile   under a `sys.setprofile` tracer that keeps every call with its frame info
               (file, line, function, time): what a generic Python tracer costs;
  graph        inside the emulator's `ttnn.graph.begin_graph_capture` / `end_graph_capture`.
Also timed: `execute_trace` of a one-op trace bare and recorded (the replay wrapper), and an
empty graph capture region (begin + end).

Times are CPU time of this thread, so other load on the machine does not inflate them; medians
over interleaved rounds. The recorder's supervisor (which turns the log into SQLite in another
process) is not included here: its cost is what `store_throughput` measures.
Run: python -m benchmarks.alternatives [--iterations N] [--rounds R]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

OPS_PER_ITERATION = 3
_clock = time.thread_time_ns


def op_loop(ttnn: Any, x: Any, iterations: int) -> None:
    """The measured program: what a model's inner loop looks like to ttnn."""
    for _ in range(iterations):
        y = ttnn.add(x, x)
        z = ttnn.relu(y)
        ttnn.multiply(z, x)


def make_profiler() -> tuple[Callable, list]:
    """A `sys.setprofile` hook that records every Python and C call with its frame info."""
    calls: list[tuple] = []
    append = calls.append
    now = time.perf_counter_ns

    def profile(frame: Any, event: str, arg: Any) -> None:
        if event == "call" or event == "c_call":
            code = frame.f_code
            append((event, code.co_filename, frame.f_lineno, code.co_name, now()))

    return profile, calls


def recorded_ttnn(raw: Any, dev: Any, tmp: str, callsites: bool) -> Any:
    """The `ttnn` module a recorded program sees, with the recorder's in-process pieces as
    `ttrecord run` sets them up (log file, call sites at depth 2, allocator snapshots)."""
    import ttrecord
    from ttrecord.recorder.log import LogWriter
    from ttrecord.recorder.proxy import install
    from ttrecord.recorder.recorder import Recorder

    log = LogWriter(os.path.join(tmp, f"log-{callsites}"))
    internal = [os.path.dirname(ttrecord.__file__)]
    recorder = Recorder(raw, log, internal, 2 if callsites else 0, callsites=callsites)
    recorder.devices.add(dev)  # opened before recording started
    recorder.allocations.changes()
    installation = install(raw, recorder)
    proxy = sys.modules["ttnn"]
    installation.uninstall()  # the proxy keeps recording; sys.modules goes back to normal
    return proxy


def _per_op(run: Callable[[], None], ops: int) -> float:
    start = _clock()
    run()
    return (_clock() - start) / ops / 1000.0  # microseconds


def measure(iterations: int = 400, rounds: int = 7) -> dict:
    import torch

    from ttrecord import emulator

    raw = emulator.install()
    dev = raw.open_device(device_id=0, trace_region_size=1 << 20)
    x = raw.from_torch(torch.ones(32, 32), dtype=raw.bfloat16, layout=raw.TILE_LAYOUT, device=dev)
    tmp = tempfile.mkdtemp(prefix="ttrecord-bench-")
    traced = recorded_ttnn(raw, dev, tmp, callsites=True)
    traced_no_sites = recorded_ttnn(raw, dev, tmp, callsites=False)
    profile, calls = make_profiler()
    graph = raw.graph

    def under_profile() -> None:
        sys.setprofile(profile)
        try:
            op_loop(raw, x, iterations)
        finally:
            sys.setprofile(None)
        calls.clear()

    def under_graph() -> None:
        graph.begin_graph_capture(graph.RunMode.NORMAL)
        try:
            op_loop(raw, x, iterations)
        finally:
            graph.end_graph_capture()

    variants: dict[str, Callable[[], None]] = {
        "bare": lambda: op_loop(raw, x, iterations),
        "ttrecord": lambda: op_loop(traced, x, iterations),
        "ttrecord_no_callsites": lambda: op_loop(traced_no_sites, x, iterations),
        "setprofile": under_profile,
        "graph_capture": under_graph,
    }
    ops = iterations * OPS_PER_ITERATION
    for run in variants.values():  # warm up: call-site caches, tensor metadata, allocator
        op_loop(raw, x, 20)
        run()
    samples: dict[str, list[float]] = {name: [] for name in variants}
    for _ in range(rounds):
        for name, run in variants.items():
            samples[name].append(_per_op(run, ops))
    med = {name: statistics.median(v) for name, v in samples.items()}

    # An empty graph capture region, against an empty Python call as the baseline.
    def empty_region() -> None:
        graph.begin_graph_capture(graph.RunMode.NORMAL)
        graph.end_graph_capture()

    region = statistics.median(
        _per_op(lambda: [empty_region() for _ in range(500)], 500)
        - _per_op(lambda: [None for _ in range(500)], 500)
        for _ in range(rounds)
    )
    replay = measure_execute_trace(raw, dev, x, traced, rounds)

    bare = med["bare"]

    def added(name: str) -> float:
        return round(med[name] - bare, 2)

    def ratio(name: str) -> float:
        return round(med[name] / bare, 3)

    return {
        "benchmark": "alternatives",
        "ops": ops,
        "rounds": rounds,
        "bare_us_per_op": round(bare, 2),
        "ttrecord_added_us": added("ttrecord"),
        "ttrecord_ratio": ratio("ttrecord"),
        "ttrecord_no_callsites_added_us": added("ttrecord_no_callsites"),
        "ttrecord_no_callsites_ratio": ratio("ttrecord_no_callsites"),
        "setprofile_added_us": added("setprofile"),
        "setprofile_ratio": ratio("setprofile"),
        "setprofile_vs_ttrecord": round((med["setprofile"] - bare) / max(med["ttrecord"] - bare, 1e-9), 2),
        "emulator_graph_capture_added_us": added("graph_capture"),
        "emulator_graph_capture_ratio": ratio("graph_capture"),
        "emulator_graph_region_us": round(region, 2),
        **replay,
        "execute_trace_target_us": 2.0,
        "execute_trace_within_target": replay["execute_trace_added_us"] <= 2.0,
        "load_avg_1m": round(os.getloadavg()[0], 2),
    }


def measure_execute_trace(raw: Any, dev: Any, x: Any, traced: Any, rounds: int, n: int = 1000) -> dict:
    """`execute_trace` of a captured one-op trace, bare and through the recorder's proxy.

    Runs last: once a trace exists the emulator warns on every allocation, as ttnn does."""
    out = raw.relu(x)
    tid = raw.begin_trace_capture(dev, cq_id=0)
    out = raw.relu(x)
    raw.end_trace_capture(dev, tid, cq_id=0)
    bare_exec, traced_exec = raw.execute_trace, traced.execute_trace

    def loop(execute: Callable) -> Callable[[], None]:
        return lambda: [execute(dev, tid, cq_id=0, blocking=False) for _ in range(n)]

    for execute in (bare_exec, traced_exec):
        loop(execute)()
    bare, recorded = [], []
    for _ in range(rounds):
        bare.append(_per_op(loop(bare_exec), n))
        recorded.append(_per_op(loop(traced_exec), n))
    raw.release_trace(dev, tid)
    del out
    b, r = statistics.median(bare), statistics.median(recorded)
    return {"execute_trace_us": round(b, 2), "execute_trace_added_us": round(r - b, 2)}


def main(argv: list[str] | None = None) -> list[dict]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=400, help="loop iterations per timing")
    parser.add_argument("--rounds", type=int, default=7, help="timings per variant")
    opts = parser.parse_args(argv)
    result = measure(opts.iterations, opts.rounds)
    print(json.dumps(result), flush=True)
    return [result]


if __name__ == "__main__":
    main()
