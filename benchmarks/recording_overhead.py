"""What recording adds to each ttnn call, measured in one process on the emulator.

Two calls are timed: `ttnn.relu` on a 32x32 bf16 tile (it allocates an output and, since the
result is dropped, the previous output is freed: two allocator changes per op, as in a model)
and a no-op registered as a ttnn op (nothing allocated: the recorder's floor). Each runs
without the recorder, with it but without call sites, and with call sites at stack depth 0 and
at the default depth 2. Also printed: a bare wrapt wrapper around a no-op, the floor any proxy
pays. Times are CPU time of this thread (robust to other load on the machine), medians over
interleaved rounds. `--live N` keeps N more device buffers alive throughout (a model's
weights); `python -m benchmarks.live_buffers` draws the whole curve on both backends.
Run: python -m benchmarks.recording_overhead [--ops N] [--rounds R] [--live N]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time

import wrapt


def _time_per_call(fn, n: int) -> float:
    start = time.thread_time_ns()
    for _ in range(n):
        fn()
    return (time.thread_time_ns() - start) / n / 1000.0  # microseconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", type=int, default=2000, help="calls per measurement")
    parser.add_argument("--rounds", type=int, default=7, help="measurements per variant")
    parser.add_argument("--live", type=int, default=0, help="extra device buffers kept alive")
    opts = parser.parse_args()

    import torch

    import ttrecord
    from ttrecord import emulator
    from ttrecord.events import Kind
    from ttrecord.recorder.log import LogWriter
    from ttrecord.recorder.proxy import _make_wrapper, install
    from ttrecord.recorder.recorder import Recorder

    raw = emulator.install()
    dev = raw.open_device(device_id=0)
    x = raw.from_torch(torch.ones(32, 32), dtype=raw.bfloat16, layout=raw.TILE_LAYOUT, device=dev)
    weights = [raw.relu(x) for _ in range(opts.live)]  # noqa: F841 - kept alive on purpose
    internal = [os.path.dirname(ttrecord.__file__)]
    tmp = tempfile.mkdtemp()

    def noop(t):
        return None

    def recorded(callsites: bool, depth: int):
        log = LogWriter(os.path.join(tmp, f"log-{callsites}-{depth}"))
        recorder = Recorder(raw, log, internal, depth, callsites=callsites)
        recorder.devices.add(dev)  # the device was opened before recording started
        recorder.allocations.changes()
        installation = install(raw, recorder)
        relu = sys.modules["ttnn"].relu
        installation.uninstall()
        return relu, wrapt.FunctionWrapper(noop, _make_wrapper(recorder, "noop", Kind.OP))

    variants = {"no recorder": (raw.relu, noop)}
    variants["recorder, no call sites"] = recorded(False, 0)
    variants["recorder, call sites depth 0"] = recorded(True, 0)
    variants["recorder, call sites depth 2"] = recorded(True, 2)
    wrapped_noop = wrapt.FunctionWrapper(noop, lambda w, i, a, k: w(*a, **k))

    results: dict[tuple[str, str], list[float]] = {}
    for relu, nop in variants.values():  # warm up caches (call sites, tensor metadata)
        _time_per_call(lambda f=relu: f(x), 200)
        _time_per_call(lambda f=nop: f(x), 200)
    for _ in range(opts.rounds):
        for name, (relu, nop) in variants.items():
            results.setdefault(("relu", name), []).append(_time_per_call(lambda f=relu: f(x), opts.ops))
            results.setdefault(("noop", name), []).append(_time_per_call(lambda f=nop: f(x), opts.ops))
        results.setdefault(("wrapt", "bare"), []).append(_time_per_call(lambda: noop(x), opts.ops * 5))
        results.setdefault(("wrapt", "wrapped"), []).append(_time_per_call(lambda: wrapped_noop(x), opts.ops * 5))

    med = {key: statistics.median(v) for key, v in results.items()}
    print(f"CPU time per call, median of {opts.rounds} rounds x {opts.ops} calls, "
          f"{opts.live} extra live buffers")
    for op, title in (("relu", "emulator relu 32x32 bf16 (allocates, frees the previous output)"),
                      ("noop", "no-op ttnn call (nothing allocated)")):  # fmt: skip
        print(title)
        base = med[(op, "no recorder")]
        for name in variants:
            value = med[(op, name)]
            added = f"   +{value - base:6.2f} us added" if name != "no recorder" else ""
            print(f"  {name:30s} {value:8.2f} us{added}")
    bare = med[("wrapt", "wrapped")] - med[("wrapt", "bare")]
    print(f"bare wrapt FunctionWrapper around a no-op: +{bare:.2f} us per call")

    def added(op: str, name: str) -> float:
        return round(med[(op, name)] - med[(op, "no recorder")], 2)

    # one JSON line for `python -m benchmarks`
    print(json.dumps({
        "benchmark": "recording_overhead",
        "live_buffers": opts.live,
        "relu_us": round(med[("relu", "no recorder")], 2),
        "relu_added_us_no_callsites": added("relu", "recorder, no call sites"),
        "relu_added_us_callsites": added("relu", "recorder, call sites depth 2"),
        "noop_added_us_no_callsites": added("noop", "recorder, no call sites"),
        "noop_added_us_callsites": added("noop", "recorder, call sites depth 2"),
        "wrapt_added_us": round(bare, 2),
    }))


if __name__ == "__main__":
    main()
