"""What recording adds per call, counted in instructions (which load does not move) next to CPU
time, on the emulator.

Each figure is one loop run bare and through the recorder's module proxy (as `ttrecord run`
installs it), in the same process:
  relu          `ttnn.relu` on a 32x32 bf16 tile, the emulator's small op (allocates its
                output, frees the previous one); recorded without call sites and with call
                sites at the default depth 2
  execute_trace `execute_trace` of a captured one-op trace (the replay loop's call)
  h2d_copy      `copy_host_to_device_tensor` of a tile into a device tensor (replay-loop input)
  read          `ttnn.to_torch` of a trace output (replay-loop output read)
  weight_load   `ttnn.from_torch(..., device=dev)` of a 32x32 tile, the tensors kept alive
                (loading a model's weights)
Instructions: the loop runs in a child under `valgrind --tool=callgrind`, each loop entered
through a ctypes callback so `--toggle-collect=ffi_call --dump-after=ffi_call` counts exactly
that loop (one dump file per loop); the count is divided by the loop's calls. Instrumentation
starts off (importing torch under it would take minutes) and the child turns it on with
`callgrind_control` once its setup is done. CPU time: the same loops in a plain child, CPU
time of the thread, medians over rounds. Each recorder hot path is measured (the C extension
and the pure-Python fallback, TTRECORD_PURE_PYTHON=1), one row each.
Run: python -m benchmarks.recorder_instructions [--calls N] [--rounds R] [--no-valgrind]
     [--only relu,execute_trace,...] [--paths c,python]
"""

from __future__ import annotations

import argparse
import ctypes
import glob
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
_clock = time.thread_time_ns
VARIANTS = ("bare", "recorded")
COUNTED_CALLS = 300  # calls per loop under valgrind (the count is exact: no rounds needed)


def loops(calls: int) -> list[tuple[str, Callable[[], None], int]]:
    """(figure name, loop, calls in it), in the order they run; they share one backend and
    one recorder per call-site setting, as a program would."""
    import torch

    from benchmarks.alternatives import emulator_backend, recorded_ttnn

    b = emulator_backend()
    raw, dev, x = b.raw, b.dev, b.x
    tmp = tempfile.mkdtemp(prefix="ttrecord-bench-")
    plain, _ = recorded_ttnn(raw, dev, tmp, callsites=False)
    sited, _ = recorded_ttnn(raw, dev, tmp, callsites=True, tag="-sites")
    host = raw.from_torch(torch.ones(32, 32), dtype=raw.bfloat16, layout=raw.TILE_LAYOUT)
    tile = torch.ones(32, 32)
    out: list[Any] = []
    weights: list[Any] = []

    def relu(t: Any) -> Callable[[], None]:
        def run() -> None:
            for _ in range(calls):
                t.relu(x)
        return run

    def load(t: Any) -> Callable[[], None]:
        def run() -> None:
            for _ in range(calls):
                weights.append(t.from_torch(tile, dtype=raw.bfloat16, layout=raw.TILE_LAYOUT,
                                            device=dev))  # fmt: skip
        return run

    def copy(t: Any) -> Callable[[], None]:
        def run() -> None:
            for _ in range(calls):
                t.copy_host_to_device_tensor(host, x)
        return run

    def execute(t: Any, tid: Any) -> Callable[[], None]:
        def run() -> None:
            for _ in range(calls):
                t.execute_trace(dev, tid, cq_id=0, blocking=False)
        return run

    def read(t: Any) -> Callable[[], None]:
        def run() -> None:
            for _ in range(calls):
                t.to_torch(out[0])
        return run

    result = [
        ("relu.bare", relu(raw), calls),
        ("relu.recorded_no_callsites", relu(plain), calls),
        ("relu.recorded", relu(sited), calls),
        ("weight_load.bare", load(raw), calls),
        ("weight_load.recorded", load(sited), calls),
        ("h2d_copy.bare", copy(raw), calls),
        ("h2d_copy.recorded", copy(sited), calls),
    ]
    # The trace last: once one exists the emulator warns on every allocation, as ttnn does.
    out.append(raw.relu(x))
    tid = raw.begin_trace_capture(dev, cq_id=0)
    out[0] = raw.relu(x)
    raw.end_trace_capture(dev, tid, cq_id=0)
    result += [
        ("execute_trace.bare", execute(raw, tid), calls),
        ("execute_trace.recorded", execute(sited, tid), calls),
        ("read.bare", read(raw), calls),
        ("read.recorded", read(sited), calls),
    ]
    return result


def _instrument_on() -> None:
    """Ask callgrind to instrument this process from now on, and wait until it did (it reads
    the request while this process runs, so poll instead of blocking)."""
    proc = subprocess.Popen(["callgrind_control", "-i", "on", str(os.getpid())],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    while proc.poll() is None:
        time.sleep(0.01)


def child(mode: str, calls: int, rounds: int, only: list[str] | None = None) -> None:
    """Runs every loop (or those of the figures in `only`); prints one JSON line per loop
    (count mode: the loop's name in order, the parent reads the dump files; time mode: its
    median CPU µs per call)."""
    measured = [m for m in loops(calls) if not only or m[0].split(".")[0] in only]
    if mode == "count":
        _instrument_on()
    for name, run, n in measured:
        if mode == "count":
            run()  # warm: first-sight costs (call sites, tensor metadata) are not per call
            callback = ctypes.CFUNCTYPE(None)(run)
            callback()  # one dump file (ffi_call returns) holds this loop alone
            print(json.dumps({"loop": name, "calls": n}), flush=True)
        else:
            run()
            samples = []
            for _ in range(rounds):
                start = _clock()
                run()
                samples.append((_clock() - start) / n / 1000.0)
            print(json.dumps({"loop": name, "us": statistics.median(samples)}), flush=True)


def _rows(cmd: list[str], env: dict[str, str] | None = None) -> list[dict]:
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, env=env, timeout=1200)
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["failed"])[-1]
        raise RuntimeError(f"{' '.join(cmd[:3])}: {last}")
    return [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]


def _only_args(only: list[str] | None) -> list[str]:
    return ["--only", ",".join(only)] if only else []


def count_instructions(calls: int, env: dict[str, str], only: list[str] | None = None
                       ) -> dict[str, float]:  # fmt: skip
    """Instructions per call of each loop, from one child under callgrind."""
    tmp = tempfile.mkdtemp(prefix="ttrecord-cg-")
    out = os.path.join(tmp, "cg.out")
    cmd = ["valgrind", "--tool=callgrind", "--instr-atstart=no", "--toggle-collect=ffi_call",
           "--dump-after=ffi_call", f"--callgrind-out-file={out}", sys.executable, "-m",
           "benchmarks.recorder_instructions", "--child", "count", "--calls", str(calls),
           *_only_args(only)]  # fmt: skip
    try:
        rows = _rows(cmd, env)
        dumps = sorted(glob.glob(out + ".*"), key=lambda p: int(p.rsplit(".", 1)[1]))
        totals = [_total(Path(p).read_text()) for p in dumps]
        return {row["loop"]: total / row["calls"] for row, total in zip(rows, _loops(totals))}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _total(dump: str) -> int:
    return next(int(line.split()[1]) for line in dump.splitlines() if line.startswith("totals:"))


def _loops(totals: list[int]) -> list[int]:
    """One total per loop: a loop that calls ffi_call itself (once, near its end) leaves its
    count in two dumps, the second tiny; every measured loop is far above the threshold."""
    merged: list[int] = []
    for total in totals:
        if total >= 100_000 or not merged:
            merged.append(total)
        else:
            merged[-1] += total
    return merged


def cpu_times(calls: int, rounds: int, env: dict[str, str], only: list[str] | None = None
              ) -> dict[str, float]:  # fmt: skip
    cmd = [sys.executable, "-m", "benchmarks.recorder_instructions", "--child", "time",
           "--calls", str(calls), "--rounds", str(rounds), *_only_args(only)]  # fmt: skip
    return {row["loop"]: row["us"] for row in _rows(cmd, env)}


def hot_paths() -> list[tuple[str, dict[str, str]]]:
    """(hot path, the environment that selects it) for each path this checkout has."""
    try:
        from ttrecord.recorder import hot_path
    except ImportError:  # a checkout from before the choice existed: its one path
        return [("python", dict(os.environ))]
    pure = {**os.environ, hot_path.FORCE_PURE: "1"}
    paths = [(hot_path.PYTHON, pure)]
    if hot_path.decide()["hot_path"] == hot_path.C:
        paths.insert(0, (hot_path.C, {k: v for k, v in os.environ.items()
                                      if k != hot_path.FORCE_PURE}))  # fmt: skip
    return paths


def figures(path: str, us: dict[str, float], instr: dict[str, float] | None) -> dict:
    """Per figure: bare µs and instructions, what recording adds, and the ratios."""
    row: dict[str, Any] = {"benchmark": "recorder_instructions", "hot_path": path}
    pairs = [("relu", "relu.recorded", "added_callsites"),
             ("relu", "relu.recorded_no_callsites", "added_no_callsites"),
             ("execute_trace", "execute_trace.recorded", "added"),
             ("h2d_copy", "h2d_copy.recorded", "added"),
             ("read", "read.recorded", "added"),
             ("weight_load", "weight_load.recorded", "added")]  # fmt: skip
    for base, recorded, label in pairs:
        bare = f"{base}.bare"
        if bare not in us:  # left out (--only)
            continue
        row[f"{base}_us"] = round(us[bare], 2)
        row[f"{base}_{label}_us"] = round(us[recorded] - us[bare], 2)
        if instr is not None:
            row[f"{base}_instructions"] = round(instr[bare])
            row[f"{base}_{label}_instructions"] = round(instr[recorded] - instr[bare])
            row[f"{base}_{label}_instructions_pct"] = round(
                100.0 * (instr[recorded] - instr[bare]) / instr[bare], 1)
    if "weight_load.bare" in us:
        row["weight_load_ratio"] = round(us["weight_load.recorded"] / us["weight_load.bare"], 2)
    if instr is not None and "weight_load.bare" in instr:
        row["weight_load_ratio_instructions"] = round(
            instr["weight_load.recorded"] / instr["weight_load.bare"], 2)
    if instr is None:
        row["instructions"] = "skipped: valgrind not found"
    return row


def main(argv: list[str] | None = None) -> list[dict]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=0, help="calls per loop")
    parser.add_argument("--rounds", type=int, default=7, help="CPU timings per loop")
    parser.add_argument("--no-valgrind", action="store_true", help="CPU time only")
    parser.add_argument("--only", help="these figures only (comma-separated: relu,execute_trace,"
                        "h2d_copy,read,weight_load)")  # fmt: skip
    parser.add_argument("--paths", help="these hot paths only (comma-separated: c,python)")
    parser.add_argument("--child", choices=("count", "time"), help=argparse.SUPPRESS)
    opts = parser.parse_args(argv)
    only = opts.only.split(",") if opts.only else None
    if opts.child:
        child(opts.child, opts.calls or 1000, opts.rounds, only)
        return []
    rows = []
    for path, env in hot_paths():
        if opts.paths and path not in opts.paths.split(","):
            continue
        instr = None
        if not opts.no_valgrind and shutil.which("valgrind"):
            instr = count_instructions(opts.calls or COUNTED_CALLS, env, only)
        row = figures(path, cpu_times(opts.calls or 1000, opts.rounds, env, only), instr)
        print(json.dumps(row), flush=True)
        rows.append(row)
    return rows


if __name__ == "__main__":
    main()
