"""What `--verify-replay` adds to a traced decode loop, measured in one process on the emulator.

A step of `--layers` matmul+gelu layers (32x`--hidden` bf16 activations, one weight per layer)
is captured once; each loop iteration copies a new input into the captured input and replays.
Two loops: a steady one (nothing allocated between replays: the verifier only checks that, so
only the first replay is re-run) and a churning one (a tensor allocated and dropped between
replays, so every replay is verified: inputs read, ops re-run on copies, outputs compared).
Each loop runs recorded without and with the verifier; the figures are the differences per
iteration, CPU time of this thread, medians over interleaved rounds.
Run: python -m benchmarks.verify_cost [--layers N] [--hidden H] [--steps S] [--rounds R]
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
    parser.add_argument("--layers", type=int, default=8)
    parser.add_argument("--hidden", type=int, default=256)
    parser.add_argument("--steps", type=int, default=50, help="replays per measurement")
    parser.add_argument("--rounds", type=int, default=5)
    opts = parser.parse_args()
    warnings.simplefilter("ignore")  # the churning loop allocates while a trace exists, on purpose

    import torch

    import ttrecord
    from ttrecord import emulator
    from ttrecord.recorder.log import LogWriter
    from ttrecord.recorder.proxy import install
    from ttrecord.recorder.recorder import Recorder
    from ttrecord.recorder.verify import Verifier

    raw = emulator.install()
    tmp = tempfile.mkdtemp()
    internal = [os.path.dirname(ttrecord.__file__)]

    def loop(verify: bool, churn: bool) -> float:
        """CPU µs per iteration of a recorded decode loop (a fresh device and recorder)."""
        log = LogWriter(os.path.join(tmp, f"log-{verify}-{churn}-{time.monotonic_ns()}"))
        recorder = Recorder(raw, log, internal, 2)
        if verify:
            recorder.verifier = Verifier(recorder)
        installation = install(raw, recorder)
        ttnn = sys.modules["ttnn"]
        try:
            dev = ttnn.open_device(device_id=0, trace_region_size=8 << 20)
            tile = dict(dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
            ws = [ttnn.from_torch(torch.randn(opts.hidden, opts.hidden) / 16, device=dev, **tile)
                  for _ in range(opts.layers)]  # fmt: skip
            host = ttnn.from_torch(torch.randn(32, opts.hidden), **tile)
            x = ttnn.to_device(host, dev)

            def step(h):
                for w in ws:
                    h = ttnn.gelu(ttnn.matmul(h, w))
                return h

            step(x)
            tid = ttnn.begin_trace_capture(dev, cq_id=0)
            out = step(x)
            ttnn.end_trace_capture(dev, tid, cq_id=0)
            start = time.thread_time_ns()
            for _ in range(opts.steps):
                ttnn.copy_host_to_device_tensor(host, x)
                if churn:
                    scratch = ttnn.from_torch(torch.zeros(32, 32), device=dev, **tile)
                    del scratch
                ttnn.execute_trace(dev, tid, cq_id=0, blocking=True)
                ttnn.to_torch(out)
            per_step = (time.thread_time_ns() - start) / opts.steps / 1000.0
            ttnn.release_trace(dev, tid)
            ttnn.close_device(dev)
            return per_step
        finally:
            installation.uninstall()
            log.close()

    variants = [(v, c) for c in (False, True) for v in (False, True)]
    results: dict[tuple[bool, bool], list[float]] = {k: [] for k in variants}
    loop(True, True)  # warm-up: torch kernels, caches
    for _ in range(opts.rounds):
        for verify, churn in variants:
            results[(verify, churn)].append(loop(verify, churn))
    med = {k: statistics.median(v) for k, v in results.items()}
    steady = med[(True, False)] - med[(False, False)]
    churning = med[(True, True)] - med[(False, True)]
    print(f"CPU time per decode iteration ({opts.layers} layers, hidden {opts.hidden},"
          f" {opts.steps} replays), median of {opts.rounds} rounds")
    print(f"  steady loop:   recorded {med[(False, False)]:9.1f} us   verified"
          f" {med[(True, False)]:9.1f} us   +{steady:.1f} us")
    print(f"  churning loop: recorded {med[(False, True)]:9.1f} us   verified"
          f" {med[(True, True)]:9.1f} us   +{churning:.1f} us"
          f" ({med[(True, True)] / med[(False, True)]:.2f}x)")
    print(json.dumps({
        "benchmark": "verify_cost",
        "layers": opts.layers,
        "hidden": opts.hidden,
        "recorded_step_us": round(med[(False, False)], 1),
        "steady_added_us": round(steady, 1),
        "verified_step_us": round(med[(True, True)], 1),
        "verified_added_us": round(churning, 1),
        "verified_ratio": round(med[(True, True)] / med[(False, True)], 2),
    }))


if __name__ == "__main__":
    main()
