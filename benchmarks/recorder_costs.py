"""The recorder's pieces one at a time, in hot loops: the least each part of a recorded call costs.

`alternatives` and `recording_overhead` measure what recording adds to a real op loop; this
measures each piece the recorder runs per call on its own, with warm caches, so the sum is a
lower bound for the per-call overhead of this design in CPython:
  log_per_op       an op's records: three queued (end, alloc, free) and the durable "call begins"
                   record of the next call, all written to the log before ttnn runs
  marshal          encoding one record (every record is marshalled)
  os_write         one `os.write` of a record: what a log written by system calls pays per call
  ledger_per_op    the ledger's work for one op of a loop: the previous output's death counted
                   (a free) and the new output noted (an allocation)
  snapshot_changed   an allocator snapshot diff (`reconcile`, taken only where a hazard is
                   decided) that finds one buffer freed and one allocated; snapshot_unchanged
                   when nothing changed
  get_buffers      the backend's `get_buffers` alone, which each snapshot calls
  describe_tensor  describing a tensor seen for the first time (every op output is new)
  callsite         finding and numbering the user's frame, depth 2
Times are CPU time of this thread, medians over rounds.
Run: python -m benchmarks.recorder_costs [--calls N] [--rounds R]
"""

from __future__ import annotations

import argparse
import json
import marshal
import os
import statistics
import tempfile
import time
from collections.abc import Callable

from benchmarks.alternatives import emulator_backend, recorded_ttnn

_clock = time.thread_time_ns
# A begin record as the recorder writes it for ttnn.relu on one 32x32 tile.
_RECORD = ("B", 1234, None, 987654321, 4242, "op", "ttnn.relu", "eager", 0, None, None, 3, None,
           ((17, "device", (32, 32), "BFLOAT16", "TILE", "DRAM interleaved",
             (0, "DRAM", 1048704, 2048, None, None)),), None)  # fmt: skip


def _us(fn: Callable[[], object], calls: int, rounds: int) -> float:
    samples = []
    for _ in range(rounds):
        start = _clock()
        for _ in range(calls):
            fn()
        samples.append((_clock() - start) / calls / 1000.0)
    return statistics.median(samples)


def measure(calls: int = 3000, rounds: int = 5) -> dict:
    b = emulator_backend()
    tmp = tempfile.mkdtemp(prefix="ttrecord-bench-")
    _, recorder = recorded_ttnn(b.raw, b.dev, tmp, callsites=True)
    log, allocations, sites = recorder.log, recorder.allocations, recorder.sites
    reports = b.raw._ttnn.reports
    allocations.changes()

    def callsite() -> None:
        sites.site_id(sites.user_frame(1))

    def log_per_op() -> None:  # the end, alloc and free of one op queued, then the next begin
        log.defer(_RECORD)
        log.defer(_RECORD)
        log.defer(_RECORD)
        log.write(_RECORD)

    data = marshal.dumps(_RECORD)
    fd = os.open(os.path.join(tmp, "raw"), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    figures = {
        "log_per_op_us": _us(log_per_op, calls, rounds),
        "os_write_us": _us(lambda: os.write(fd, data), calls, rounds),
        "marshal_us": _us(lambda: marshal.dumps(_RECORD), calls, rounds),
        "snapshot_unchanged_us": _us(allocations.changes, calls, rounds),
        "get_buffers_us": _us(lambda: reports.get_buffers([b.dev]), calls, rounds),
        "callsite_us": _us(callsite, calls, rounds),
    }
    os.close(fd)
    log.flush()
    # A snapshot that finds one buffer freed and one allocated, as around every op of a loop;
    # each timed alone, less the cost of reading the clock twice.
    clock_pair = _us(lambda: (_clock(), _clock()), calls, rounds)
    samples = []
    for _ in range(rounds):
        spent = 0
        y = b.raw.relu(b.x)
        allocations.changes()
        for _ in range(calls):
            y = b.raw.relu(b.x)  # noqa: F841 - replacing y frees the previous output
            start = _clock()
            allocations.changes()
            spent += _clock() - start
        samples.append(spent / calls / 1000.0 - clock_pair)
    figures["snapshot_changed_us"] = statistics.median(samples)
    describe = recorder.tensors.describe
    samples = []
    for _ in range(rounds):  # each round describes tensors the describer has not seen
        batch = [b.raw.relu(b.x) for _ in range(calls)]
        start = _clock()
        for t in batch:
            describe(t)
        samples.append((_clock() - start) / calls / 1000.0)
        del batch
    figures["describe_tensor_us"] = statistics.median(samples)
    samples = []
    for _ in range(rounds):  # the ledger: a death drained (free), a new output noted (alloc)
        spent = 0
        y = b.raw.relu(b.x)
        for _ in range(calls):
            y = b.raw.relu(b.x)  # replacing y kills the previous output
            buf = describe(y)[6]
            start = _clock()
            changes: list = []
            allocations.drain()
            allocations.observe(y, buf, changes)
            spent += _clock() - start
        samples.append(spent / calls / 1000.0 - clock_pair)
    figures["ledger_per_op_us"] = statistics.median(samples)
    recorder.unwatch()
    # One recorded op: its log records, the ledger's work, its new output described, its call
    # site (no snapshot: those are taken only where a hazard is decided).
    floor = (figures["log_per_op_us"] + figures["ledger_per_op_us"]
             + figures["describe_tensor_us"] + figures["callsite_us"])  # fmt: skip
    return {
        "benchmark": "recorder_costs",
        **{k: round(v, 2) for k, v in figures.items()},
        "per_op_floor_us": round(floor, 2),
        "target_us_callsites": 5.0,
        "load_avg_1m": round(os.getloadavg()[0], 2),
    }


def main(argv: list[str] | None = None) -> list[dict]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=3000, help="calls per timing")
    parser.add_argument("--rounds", type=int, default=5, help="timings per piece")
    opts = parser.parse_args(argv)
    result = measure(opts.calls, opts.rounds)
    print(json.dumps(result), flush=True)
    return [result]


if __name__ == "__main__":
    main()
