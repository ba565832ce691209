"""What the referrer note costs at `execute_trace`, measured in one process on the emulator.

A decode step (`--layers` matmul+gelu layers) is captured once with `--weights` extra live
weights on the device, then replayed `--steps` times, recorded. Three loops: steady (nothing
allocated since the capture: the recorder compares one generation counter and scans nothing),
churning (a scratch tensor allocated and dropped before each replay: the live set is diffed,
no buffer is held, no note), and held (one post-capture tensor kept alive: every replay walks
the program's frames and writes a note). The figure is the CPU time the hook itself takes per
replay (timed around it, thread CPU time; replays on a loaded machine vary far more than the
hook costs), median over rounds. The same loops are also timed whole (thread CPU time per
replay), and the steady and churning loops run again with the hook switched off (it returns at
once: what remains is the timer's own cost), so one run prints what the scan adds to a session
without a hazardous buffer, against nothing and as a share of a recorded replay.
Run: python -m benchmarks.referrer_scan [--layers N] [--weights W] [--steps S] [--rounds R]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
import warnings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--weights", type=int, default=500, help="extra live device tensors")
    parser.add_argument("--steps", type=int, default=100, help="replays per measurement")
    parser.add_argument("--rounds", type=int, default=5)
    opts = parser.parse_args()
    warnings.simplefilter("ignore")  # allocating while a trace exists, on purpose

    import torch

    import ttrecord
    from ttrecord import emulator
    from ttrecord.recorder.log import LogWriter
    from ttrecord.recorder.proxy import install
    from ttrecord.recorder.recorder import Recorder

    raw = emulator.install()
    tmp = tempfile.mkdtemp()
    internal = [os.path.dirname(ttrecord.__file__)]

    def loop(mode: str, off: bool = False) -> tuple[float, float]:
        """(CPU µs the referrer hook takes per replay, CPU µs per replay of the whole recorded
        loop) of a fresh recorder; `off`: the hook returns at once (what the scan saves)."""
        log = LogWriter(os.path.join(tmp, f"log-{mode}-{time.monotonic_ns()}"))
        recorder = Recorder(raw, log, internal, 2)
        spent = [0]
        hook = recorder.referrers.on_execute

        def timed(device, trace):  # type: ignore[no-untyped-def]
            t0 = time.thread_time_ns()
            try:
                return None if off else hook(device, trace)
            finally:
                spent[0] += time.thread_time_ns() - t0

        recorder.referrers.on_execute = timed  # type: ignore[method-assign]
        installation = install(raw, recorder)
        ttnn = sys.modules["ttnn"]
        try:
            dev = ttnn.open_device(device_id=0, trace_region_size=8 << 20)
            tile = dict(dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
            ws = [ttnn.from_torch(torch.randn(32, 32) / 16, device=dev, **tile) for _ in range(opts.layers)]
            extra = [ttnn.from_torch(torch.zeros(32, 32), device=dev, **tile) for _ in range(opts.weights)]
            x = ttnn.from_torch(torch.randn(32, 32), device=dev, **tile)

            def step(h):
                for w in ws:
                    h = ttnn.gelu(ttnn.matmul(h, w))
                return h

            step(x)
            tid = ttnn.begin_trace_capture(dev, cq_id=0)
            step(x)
            ttnn.end_trace_capture(dev, tid, cq_id=0)
            kept = ttnn.from_torch(torch.zeros(32, 32), device=dev, **tile) if mode == "held" else None
            t0 = time.thread_time_ns()
            for _ in range(opts.steps):
                if mode == "churn":
                    scratch = ttnn.from_torch(torch.zeros(32, 32), device=dev, **tile)
                    del scratch
                ttnn.execute_trace(dev, tid, cq_id=0, blocking=True)
            whole = (time.thread_time_ns() - t0) / opts.steps / 1000.0
            per_step = spent[0] / opts.steps / 1000.0
            del kept, extra
            ttnn.release_trace(dev, tid)
            ttnn.close_device(dev)
            return per_step, whole
        finally:
            installation.uninstall()
            log.close()

    modes = ("steady", "churn", "held")
    results: dict[str, list[float]] = {m: [] for m in modes}
    loops: dict[str, list[float]] = {m: [] for m in modes}
    off: dict[str, list[float]] = {m: [] for m in ("steady", "churn")}
    loop("held")  # warm-up
    for _ in range(opts.rounds):
        for mode in modes:
            hook_us, whole_us = loop(mode)
            results[mode].append(hook_us)
            loops[mode].append(whole_us)
        for mode in off:  # the same loops with the hook switched off: the timer's own cost
            off[mode].append(loop(mode, off=True)[0])
    added = {m: statistics.median(v) for m, v in results.items()}
    whole = {m: statistics.median(v) for m, v in loops.items()}
    unhooked = {m: statistics.median(v) for m, v in off.items()}
    print(f"CPU time of the referrer hook per replay ({opts.layers} layers,"
          f" {opts.weights} extra live tensors, {opts.steps} replays), median of {opts.rounds} rounds")
    for m in modes:
        print(f"  {m:7s} {added[m]:8.2f} us of {whole[m]:9.1f} us per recorded replay"
              f" ({100.0 * added[m] / whole[m]:.2f} %)")
    print("Without a hazardous buffer, the scan against the hook switched off (per replay):")
    for m in off:
        print(f"  {m:7s} {added[m]:8.2f} us with the scan, {unhooked[m]:6.2f} us without"
              f" (+{added[m] - unhooked[m]:.2f} us, {100.0 * (added[m] - unhooked[m]) / whole[m]:.2f} % of a replay)")
    print(json.dumps({
        "benchmark": "referrer_scan",
        "live_tensors": opts.weights + opts.layers + 1,
        "steady_added_us": round(added["steady"], 2),
        "churn_added_us": round(added["churn"], 2),
        "held_added_us": round(added["held"], 2),
        "steady_off_us": round(unhooked["steady"], 2),
        "churn_off_us": round(unhooked["churn"], 2),
        "replay_us": round(whole["steady"], 1),
    }))


if __name__ == "__main__":
    main()
