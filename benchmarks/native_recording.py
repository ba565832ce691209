"""The native recorder's cost per recorded event, without and with a stack (targets: <= 5 us
and <= 20 us per event).

The recorder library is compiled here from ttrecord/native/recorder.cpp with no tt-metal role
(its recording path does not depend on which roles exist) and loaded with its log enabled, as
`LD_PRELOAD` would in a recorded program. Its benchmark entry point runs, in C, `n` calls of
one function that records a hooked call (a begin and an end record, the begin's stack taken by the
same `backtrace()` as a real hook when asked) and `n` bare calls of the same function, so
ctypes is outside the timed loop and the figures are ratios of one run. The stack is taken
two frames below the entry point, under Python's own frames: about as deep as a C++ engine's
call into tt-metal.
  per_event_no_stack   one recorded call (its begin and end records) minus a bare call
  per_event_stack      the same with the begin record's stack
  bare_call            the function without recording: what an unhooked call pays (nothing
                       more than itself; a function that is not hooked is not touched at all)
Run: python -m benchmarks.native_recording [--calls N] [--rounds R]
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

from ttrecord.native import roles
from ttrecord.native.build import compile_recorder


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args(argv)
    cxx = shutil.which("g++")
    if cxx is None:
        print(json.dumps({"benchmark": "native_recording", "skipped": "no g++"}))
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        lib = Path(tmp) / "libttrecord_native.so"
        compile_recorder(cxx, roles.header(roles.Resolution({}, [], None)), lib)
        os.environ["TTRECORD_NATIVE_LOG"] = str(Path(tmp) / "bench")
        os.environ["TTRECORD_NATIVE_STACKS"] = "auto"
        native = ctypes.CDLL(str(lib))
        bench = native.ttrecord_native_bench
        bench.restype = ctypes.c_uint64
        bench.argtypes = [ctypes.c_int, ctypes.c_int]
        bench(1000, 1)  # warm: opens the log, writes the module map
        times: dict[int, list[float]] = {0: [], 1: [], 2: []}
        for _ in range(args.rounds):
            for mode in (2, 0, 1):
                times[mode].append(bench(args.calls, mode) / args.calls)
        log_bytes = (Path(tmp) / f"bench.{os.getpid()}").stat().st_size
    bare = statistics.median(times[2])
    no_stack = statistics.median(times[0]) - bare
    stack = statistics.median(times[1]) - bare
    for name, ns, target in (("per_event_no_stack", no_stack, 5000),
                             ("per_event_stack", stack, 20000), ("bare_call", bare, None)):
        row = {"benchmark": "native_recording", "case": name, "ns": round(ns, 1),
               "us": round(ns / 1000, 3), "calls": args.calls, "rounds": args.rounds}
        if target is not None:
            row["target_us"] = target / 1000
            row["met"] = ns <= target
        print(json.dumps(row))
    print(json.dumps({"benchmark": "native_recording", "case": "stack_vs_no_stack",
                      "ratio": round(stack / no_stack, 2) if no_stack > 0 else None,
                      "log_bytes": log_bytes}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
