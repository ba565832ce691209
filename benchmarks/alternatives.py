"""ttrecord's recording against what else a ttnn user could run to see the same loop.

One small op loop (add, relu, multiply on 32x32 bf16 tiles: each op allocates its output and
frees the previous one, as in a model) is timed four ways in one process:
  bare         the backend alone;
  ttrecord     through the recorder's module proxy, call sites at the default depth 2 (and
               without call sites), writing its event log as in `ttrecord run`;
  setprofile   under a `sys.setprofile` tracer that keeps every call with its frame info
               (file, line, function, time): what a generic Python tracer costs;
  graph        inside ttnn's graph capture (`begin_graph_capture` / `end_graph_capture`).
Also timed: an empty graph capture region, `execute_trace` of a one-op trace bare and recorded
(the replay wrapper; emulator only), and a breakdown of the recorder's cost: time inside the op
versus in the recorder, and the recorder with allocator snapshots, log writes or call sites off.

It runs on the emulator, then again on real ttnn when the real-ttnn lane is set up
(tests/realttnn/setup: ttnn 0.81.1 on a mock p150, in that lane's python, its own process).
Times are CPU time of the measuring thread, so other load on the machine does not inflate them;
medians over interleaved rounds. The recorder's supervisor (which turns the log into SQLite in
another process) is not included: its cost is what `store_throughput` measures.
Run: python -m benchmarks.alternatives [--iterations N] [--rounds R] [--backend all|emulator|ttnn]
     [--profile]  (prints where the recorded loop's time goes, by function, under cProfile)
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import wrapt

ROOT = Path(__file__).resolve().parent.parent
LOOP_OPS = ("add", "relu", "multiply")
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


def recorded_ttnn(raw: Any, dev: Any, tmp: str, callsites: bool, tag: str = "") -> tuple:
    """(the `ttnn` module a recorded program sees, its recorder), with the recorder's in-process
    pieces as `ttrecord run` sets them up (log file, call sites at depth 2, allocator snapshots)."""
    import ttrecord
    from ttrecord.recorder.log import LogWriter
    from ttrecord.recorder.proxy import install
    from ttrecord.recorder.recorder import Recorder

    log = LogWriter(os.path.join(tmp, f"log-{callsites}{tag}"))
    internal = [os.path.dirname(ttrecord.__file__), os.path.dirname(raw.__file__)]
    recorder = Recorder(raw, log, internal, 2 if callsites else 0, callsites=callsites)
    recorder.devices.add(dev)  # opened before recording started
    recorder.allocations.changes()
    installation = install(raw, recorder)
    proxy = sys.modules["ttnn"]
    installation.uninstall()  # the proxy keeps recording; sys.modules goes back to normal
    return proxy, recorder


def without(recorder: Any, part: str) -> None:
    """Switch one of the recorder's costs off, to measure its share by difference: the
    allocator snapshots (and the alloc/free records they yield), or the log writes."""
    if part == "snapshots":  # allocation tracking: the ledger (snapshots only at decisions)
        recorder.allocations.enabled = False
    elif part == "log":
        for method in ("write", "write_many", "defer", "defer_many"):
            if hasattr(recorder.log, method):
                setattr(recorder.log, method, lambda records: None)


def timed_ops(raw: Any, inside: list[int]) -> types.SimpleNamespace:
    """The loop's ops, each adding the CPU time spent inside the emulator to `inside[0]`."""

    def timed(fn: Callable) -> Callable:
        def call(*args: Any, **kwargs: Any) -> Any:
            start = _clock()
            try:
                return fn(*args, **kwargs)
            finally:
                inside[0] += _clock() - start

        return call

    return types.SimpleNamespace(**{name: timed(getattr(raw, name)) for name in LOOP_OPS})


def recorded_namespace(namespace: Any, recorder: Any) -> types.SimpleNamespace:
    """`namespace`'s ops behind the recorder's wrapper, as the module proxy wraps ttnn's."""
    from ttrecord.events import Kind
    from ttrecord.recorder.proxy import _make_wrapper

    return types.SimpleNamespace(**{
        name: wrapt.FunctionWrapper(getattr(namespace, name),
                                    _make_wrapper(recorder, name, Kind.OP))
        for name in LOOP_OPS
    })  # fmt: skip


def _per_op(run: Callable[[], None], ops: int) -> float:
    start = _clock()
    run()
    return (_clock() - start) / ops / 1000.0  # microseconds


class Backend:
    """What differs between the emulator and real ttnn: the module, a device, an input tile
    and how to open and close a graph capture."""

    def __init__(self, name: str, raw: Any, dev: Any, x: Any, graph: Any) -> None:
        self.name, self.raw, self.dev, self.x = name, raw, dev, x
        self.graph = graph  # a module with begin_graph_capture / end_graph_capture
        self.run_mode = raw.graph.RunMode.NORMAL


def emulator_backend() -> Backend:
    import torch

    from ttrecord import emulator

    raw = emulator.install()
    dev = raw.open_device(device_id=0, trace_region_size=1 << 20)
    x = raw.from_torch(torch.ones(32, 32), dtype=raw.bfloat16, layout=raw.TILE_LAYOUT, device=dev)
    return Backend("emulator", raw, dev, x, raw.graph)


def real_ttnn_backend() -> Backend:
    """Real ttnn on the contract lane's mock device (no torch there: the tile comes from numpy,
    and graph capture is the C++ one, since ttnn.graph's Python I/O recording imports torch)."""
    import numpy as np
    import ttnn

    dev = ttnn.open_device(device_id=0, trace_region_size=1 << 20)
    x = ttnn.Tensor(np.ones((32, 32), dtype=np.float32), ttnn.bfloat16, dev, ttnn.TILE_LAYOUT,
                    ttnn.DRAM_MEMORY_CONFIG)  # fmt: skip
    return Backend("ttnn", ttnn, dev, x, ttnn._ttnn.graph)


def compare(b: Backend, iterations: int, rounds: int) -> tuple[dict, dict, Any]:
    """Time the loop bare, recorded, under setprofile and inside graph capture (plus the
    variants that break the recorder's cost down); (figures, breakdown, recorded module)."""
    raw, x, graph = b.raw, b.x, b.graph
    tmp = tempfile.mkdtemp(prefix="ttrecord-bench-")
    traced, _ = recorded_ttnn(raw, b.dev, tmp, callsites=True)
    traced_no_sites, _ = recorded_ttnn(raw, b.dev, tmp, callsites=False)
    ablated = {}
    for part in ("snapshots", "log"):
        ablated[part], recorder = recorded_ttnn(raw, b.dev, tmp, callsites=True, tag=part)
        without(recorder, part)
    # The same ops with the time inside the backend counted: recording also slows the op itself
    # (caches the recorder's own work evicts), which a difference of totals cannot tell apart.
    inside_bare, inside_rec = [0], [0]
    bare_timed = timed_ops(raw, inside_bare)
    _, recorder = recorded_ttnn(raw, b.dev, tmp, callsites=True, tag="timed")
    rec_timed = recorded_namespace(timed_ops(raw, inside_rec), recorder)
    profile, calls = make_profiler()

    def under_profile() -> None:
        sys.setprofile(profile)
        try:
            op_loop(raw, x, iterations)
        finally:
            sys.setprofile(None)
        calls.clear()

    def under_graph() -> None:
        graph.begin_graph_capture(b.run_mode)
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
        "ttrecord_no_snapshots": lambda: op_loop(ablated["snapshots"], x, iterations),
        "ttrecord_no_log": lambda: op_loop(ablated["log"], x, iterations),
        "bare_timed": lambda: op_loop(bare_timed, x, iterations),
        "ttrecord_timed": lambda: op_loop(rec_timed, x, iterations),
    }
    ops = iterations * OPS_PER_ITERATION
    for run in variants.values():  # warm up: call-site caches, tensor metadata, allocator
        op_loop(raw, x, 20)
        run()
    samples: dict[str, list[float]] = {name: [] for name in variants}
    inside: dict[str, list[float]] = {"bare_timed": [], "ttrecord_timed": []}
    for _ in range(rounds):
        for name, run in variants.items():
            inside_bare[0] = inside_rec[0] = 0
            samples[name].append(_per_op(run, ops))
            if name in inside:
                spent = inside_bare[0] if name == "bare_timed" else inside_rec[0]
                inside[name].append(spent / ops / 1000.0)
    med = {name: statistics.median(v) for name, v in samples.items()}
    med_inside = {name: statistics.median(v) for name, v in inside.items()}

    # An empty graph capture region, against an empty Python call as the baseline.
    def empty_region() -> None:
        graph.begin_graph_capture(b.run_mode)
        graph.end_graph_capture()

    region = statistics.median(
        _per_op(lambda: [empty_region() for _ in range(200)], 200)
        - _per_op(lambda: [None for _ in range(200)], 200)
        for _ in range(rounds)
    )
    bare = med["bare"]

    def added(name: str) -> float:
        return round(med[name] - bare, 2)

    def ratio(name: str) -> float:
        return round(med[name] / bare, 3)

    suffix = "" if b.name == "emulator" else "_real_ttnn"
    outside_rec = med["ttrecord_timed"] - med_inside["ttrecord_timed"]
    outside_bare = med["bare_timed"] - med_inside["bare_timed"]
    breakdown = {
        "benchmark": "recording_breakdown" + suffix,
        "added_us": added("ttrecord"),
        # added time spent in the recorder's own code, and in the backend's op running slower
        "recorder_code_us": round(outside_rec - outside_bare, 2),
        "op_slowdown_us": round(med_inside["ttrecord_timed"] - med_inside["bare_timed"], 2),
        # each part switched off in turn (differences of totals, so noisier)
        "allocator_snapshots_us": round(med["ttrecord"] - med["ttrecord_no_snapshots"], 2),
        "log_writes_us": round(med["ttrecord"] - med["ttrecord_no_log"], 2),
        "callsites_us": round(med["ttrecord"] - med["ttrecord_no_callsites"], 2),
        "load_avg_1m": round(os.getloadavg()[0], 2),
    }
    result = {
        "benchmark": "alternatives" + suffix,
        "backend": b.name,
        "ops": ops,
        "rounds": rounds,
        "bare_us_per_op": round(bare, 2),
        "ttrecord_added_us": added("ttrecord"),
        "ttrecord_ratio": ratio("ttrecord"),
        "ttrecord_no_callsites_added_us": added("ttrecord_no_callsites"),
        "ttrecord_no_callsites_ratio": ratio("ttrecord_no_callsites"),
        "setprofile_added_us": added("setprofile"),
        "setprofile_ratio": ratio("setprofile"),
        "setprofile_vs_ttrecord": round(
            (med["setprofile"] - bare) / max(med["ttrecord"] - bare, 1e-9), 2
        ),
        "graph_capture_added_us": added("graph_capture"),
        "graph_capture_ratio": ratio("graph_capture"),
        "graph_capture_vs_ttrecord": round(
            (med["graph_capture"] - bare) / max(med["ttrecord"] - bare, 1e-9), 2
        ),
        "graph_region_us": round(region, 2),
        "load_avg_1m": round(os.getloadavg()[0], 2),
    }
    return result, breakdown, traced


def measure(iterations: int = 150, rounds: int = 9) -> list[dict]:
    """The emulator comparison, with the execute_trace wrapper (the mock device cannot replay)."""
    b = emulator_backend()
    result, breakdown, traced = compare(b, iterations, rounds)
    replay = measure_execute_trace(b.raw, b.dev, b.x, traced, rounds)
    result.update(replay)
    result["execute_trace_target_us"] = 2.0
    result["execute_trace_within_target"] = replay["execute_trace_added_us"] <= 2.0
    return [result, breakdown]


def lane_python() -> tuple[str, dict[str, str]] | str:
    """(python, environment) of the real-ttnn lane (tests/realttnn/setup), or why not."""
    env_file = ROOT / ".realttnn" / "env"
    if not env_file.exists():
        return "real-ttnn lane not set up (bash tests/realttnn/setup)"
    env = dict(os.environ)
    for line in env_file.read_text().splitlines():
        if line.startswith("export ") and "=" in line:
            key, _, value = line[len("export ") :].partition("=")
            env[key] = value
    python = env.get("RTTNN_PYTHON_BIN", "")
    if not os.access(python, os.X_OK):
        return f"real-ttnn lane python missing: {python}"
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    return python, env


def measure_real_ttnn(iterations: int, rounds: int) -> list[dict]:
    """Run the same comparison on real ttnn in the lane's python, in its own process."""
    lane = lane_python()
    if isinstance(lane, str):
        return [{"benchmark": "alternatives_real_ttnn", "skipped": lane}]
    python, env = lane
    argv = [python, "-m", "benchmarks.alternatives", "--backend", "ttnn",
            "--iterations", str(iterations), "--rounds", str(rounds)]  # fmt: skip
    with tempfile.TemporaryDirectory() as cwd:  # ttnn writes generated/ into the cwd
        try:
            proc = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True,
                                  timeout=300)  # fmt: skip
        except subprocess.TimeoutExpired:
            return [{"benchmark": "alternatives_real_ttnn", "skipped": "timed out"}]
    rows = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    if proc.returncode != 0 or not rows:
        last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        return [{"benchmark": "alternatives_real_ttnn", "skipped": f"failed: {last}"}]
    return rows


def measure_execute_trace(
    raw: Any, dev: Any, x: Any, traced: Any, rounds: int, n: int = 1000
) -> dict:
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


def profile_recorded(b: Backend, iterations: int, top: int = 15) -> None:
    """Print the functions the recorded loop spends its own time in (cProfile, so small
    functions look costlier than they are; the ranking is what matters)."""
    import cProfile
    import pstats

    traced, _ = recorded_ttnn(b.raw, b.dev, tempfile.mkdtemp(prefix="ttrecord-bench-"), True)
    op_loop(traced, b.x, 20)
    profiler = cProfile.Profile()
    profiler.runcall(op_loop, traced, b.x, iterations)
    stats = pstats.Stats(profiler, stream=sys.stdout)
    stats.sort_stats("tottime").print_stats(top)


def main(argv: list[str] | None = None) -> list[dict]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=150, help="loop iterations per timing")
    parser.add_argument("--rounds", type=int, default=9, help="timings per variant")
    parser.add_argument("--profile", action="store_true", help="profile the recorded loop")
    parser.add_argument("--backend", choices=("all", "emulator", "ttnn"), default="all",
                        help="ttnn: real ttnn (run inside the real-ttnn lane's python)")
    opts = parser.parse_args(argv)
    if opts.profile:
        profile_recorded(real_ttnn_backend() if opts.backend == "ttnn" else emulator_backend(),
                         opts.iterations)  # fmt: skip
        return []
    if opts.backend == "ttnn":
        result, breakdown, _ = compare(real_ttnn_backend(), opts.iterations, opts.rounds)
        results = [result, breakdown]
    else:
        results = measure(opts.iterations, opts.rounds)
        if opts.backend == "all":
            results += measure_real_ttnn(opts.iterations, opts.rounds)
    for result in results:
        print(json.dumps(result), flush=True)
    return results


if __name__ == "__main__":
    main()
