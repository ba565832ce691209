"""The supervisor's side of `ttrecord run` per event, and the recording process's memory.

An op loop (add/relu/multiply on the emulator, one torch thread) is recorded in this process
into a log file exactly as the child does, at 5,000 live buffers. Then that log goes through
the supervisor's pipeline, in a process of its own as in `ttrecord run`: `LogReader.read` ->
`Decoder.feed/ready` (log records to Events) -> `SessionWriter.add` in the supervisor's
batches, then `finish`. Printed: supervisor CPU per event and events per second (the whole
pipeline, and each stage), and how much the recording process's resident memory grew per
million events written (the log mapping, the ledger, the caches). Times are CPU time.
Run: python -m benchmarks.pipeline [--iterations N]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.alternatives import emulator_backend, op_loop, recorded_ttnn


def _rss_mb() -> float:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmRSS"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


def measure(iterations: int) -> dict:
    import torch

    torch.set_num_threads(1)
    b = emulator_backend()
    weights = [b.raw.relu(b.x) for _ in range(5000)]  # noqa: F841 - live throughout
    tmp = tempfile.mkdtemp(prefix="ttrecord-bench-")
    try:
        module, recorder = recorded_ttnn(b.raw, b.dev, tmp, callsites=True, tag="pipe")
        op_loop(module, b.x, 200)  # warm: call sites, caches, the mapping's first pages
        recorder.log.flush()
        rss0, end0 = _rss_mb(), recorder.log._end
        op_loop(module, b.x, iterations)
        recorder.finish()
        rss1 = _rss_mb()
        log_path = os.path.join(tmp, "log-Truepipe")
        log_mb = (recorder.log._end - end0) / 2**20

        recorder.log.close()
        # the supervisor is its own process (no torch, no recorded program in its heap)
        argv = [sys.executable, "-m", "benchmarks.pipeline", "--supervise", log_path]
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=600)
        figures = json.loads(proc.stdout.strip().splitlines()[-1])
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    n = figures["events"]
    return {
        "benchmark": "pipeline",
        **figures,
        "target_events_per_s": 200_000,
        "within_target": figures["supervisor_events_per_s"] >= 200_000,
        "log_mb": round(log_mb, 1),
        "child_rss_mb_per_1m_events": round((rss1 - rss0) / n * 1e6, 1),
        "target_rss_mb_per_1m_events": 10,
    }


def supervise(log_path: str) -> dict:
    """The supervisor's work on a finished log, timed: read, decode, write (CPU seconds)."""
    from ttrecord.events import SessionStatus
    from ttrecord.recorder.decode import Decoder
    from ttrecord.recorder.log import LogReader
    from ttrecord.store.writer import SessionWriter

    reader, decoder = LogReader(log_path), Decoder()
    read_s = decode_s = write_s = 0.0
    n = 0
    db = Path(log_path).with_suffix(".db")
    writer = SessionWriter(db)
    writer.start(script="model.py", argv=["model.py"], backend="emulator")
    while True:  # as the supervisor drains: one read, its events decoded, written in batches
        c0 = time.thread_time()
        records = list(reader.read(4 << 20))
        c1 = time.thread_time()
        decoder.feed(records)
        events = decoder.ready()
        c2 = time.thread_time()
        for i in range(0, len(events), 5000):
            writer.add(events[i : i + 5000])
        c3 = time.thread_time()
        read_s, decode_s, write_s = read_s + c1 - c0, decode_s + c2 - c1, write_s + c3 - c2
        n += len(events)
        if not reader.more:
            break
    c0 = time.thread_time()
    writer.finish(SessionStatus.OK, exit_code=0)
    write_s += time.thread_time() - c0
    writer.close()
    reader.close()
    total = read_s + decode_s + write_s
    return {
        "events": n,
        "supervisor_us_per_event": round(total / n * 1e6, 2),
        "supervisor_events_per_s": round(n / total),
        "read_us_per_event": round(read_s / n * 1e6, 2),
        "decode_us_per_event": round(decode_s / n * 1e6, 2),
        "write_us_per_event": round(write_s / n * 1e6, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=20_000, help="loop iterations (3 ops)")
    parser.add_argument("--supervise", metavar="LOG", help=argparse.SUPPRESS)
    opts = parser.parse_args()
    if opts.supervise:
        print(json.dumps(supervise(opts.supervise)), flush=True)
        return
    print(json.dumps(measure(opts.iterations)), flush=True)


if __name__ == "__main__":
    main()
