"""What the referrer note costs at `execute_trace`, measured in one process on the emulator.

A decode step (`--layers` matmul+gelu layers) is captured once with `--weights` extra live
weights on the device, then replayed `--steps` times, recorded. Three loops: steady (nothing
allocated since the capture: the recorder compares one generation counter and scans nothing),
churning (a scratch tensor allocated and dropped before each replay: the live set is diffed,
no buffer is held, no note), and held (one post-capture tensor kept alive: every replay walks
the program's frames and writes a note). The figure is the CPU time the hook itself takes per
replay (timed around it, thread CPU time; replays on a loaded machine vary far more than the
hook costs), median over rounds.
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

    def loop(mode: str) -> float:
        """CPU µs the referrer hook takes per replay of a recorded loop (a fresh recorder)."""
        log = LogWriter(os.path.join(tmp, f"log-{mode}-{time.monotonic_ns()}"))
        recorder = Recorder(raw, log, internal, 2)
        spent = [0]
        hook = recorder.referrers.on_execute

        def timed(device, trace):  # type: ignore[no-untyped-def]
            t0 = time.thread_time_ns()
            try:
                return hook(device, trace)
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
            for _ in range(opts.steps):
                if mode == "churn":
                    scratch = ttnn.from_torch(torch.zeros(32, 32), device=dev, **tile)
                    del scratch
                ttnn.execute_trace(dev, tid, cq_id=0, blocking=True)
            per_step = spent[0] / opts.steps / 1000.0
            del kept, extra
            ttnn.release_trace(dev, tid)
            ttnn.close_device(dev)
            return per_step
        finally:
            installation.uninstall()
            log.close()

    modes = ("steady", "churn", "held")
    results: dict[str, list[float]] = {m: [] for m in modes}
    loop("held")  # warm-up
    for _ in range(opts.rounds):
        for mode in modes:
            results[mode].append(loop(mode))
    added = {m: statistics.median(v) for m, v in results.items()}
    print(f"CPU time of the referrer hook per replay ({opts.layers} layers,"
          f" {opts.weights} extra live tensors, {opts.steps} replays), median of {opts.rounds} rounds")
    for m in modes:
        print(f"  {m:7s} {added[m]:8.2f} us")
    print(json.dumps({
        "benchmark": "referrer_scan",
        "live_tensors": opts.weights + opts.layers + 1,
        "steady_added_us": round(added["steady"], 2),
        "churn_added_us": round(added["churn"], 2),
        "held_added_us": round(added["held"], 2),
    }))


if __name__ == "__main__":
    main()
