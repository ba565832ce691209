"""The supervisor's side of `ttrecord run` per event, and the recording process's memory.

An op loop (add/relu/multiply on the emulator, one torch thread) is recorded in this process
into a log file exactly as the child does, at 5,000 live buffers. Then that log goes through
the supervisor's pipeline, in a process of its own as in `ttrecord run`, on each path in
interleaved rounds (medians): the C pipeline (store/ext/pipeline.c: `NativePipeline.read`
unmarshals and decodes, `write_ready` binds into SQLite) and the pure-Python one
(`LogReader.read` -> `Decoder.feed/ready` -> `SessionWriter.add` in the supervisor's
batches), then `finish`. Printed: supervisor CPU per event and events per second (the whole
pipeline, and each stage) on the path the supervisor takes here and on each, and how much the
recording process's resident memory grew per million events written (the log mapping, the
ledger, the caches). Times are CPU time.
Run: python -m benchmarks.pipeline [--iterations N] [--rounds R]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
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


def measure(iterations: int, rounds: int = 3) -> dict:
    import torch

    torch.set_num_threads(1)
    b = emulator_backend()
    weights = [b.raw.relu(b.x) for _ in range(5000)]  # noqa: F841 - live throughout
    from ttrecord.store import native

    paths = ["c", "python"] if native.choose()[0] is not None else ["python"]
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
        runs: dict[str, list[dict]] = {"c": [], "python": []}
        for _ in range(rounds):
            for path in paths:
                argv = [sys.executable, "-m", "benchmarks.pipeline", "--supervise", log_path,
                        "--path", path]  # fmt: skip
                proc = subprocess.run(argv, capture_output=True, text=True, timeout=600)
                runs[path].append(json.loads(proc.stdout.strip().splitlines()[-1]))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    by_path = {path: _median(rows) for path, rows in runs.items() if rows}
    chosen = "c" if "c" in by_path else "python"
    figures = by_path[chosen]
    n = figures["events"]
    out = {
        "benchmark": "pipeline",
        "path": chosen,
        **figures,
        "target_events_per_s": 200_000,
        "within_target": figures["supervisor_events_per_s"] >= 200_000,
        "log_mb": round(log_mb, 1),
        "child_rss_mb_per_1m_events": round((rss1 - rss0) / n * 1e6, 1),
        "target_rss_mb_per_1m_events": 10,
        "rounds": rounds,
        "load_avg_1m": round(os.getloadavg()[0], 2),
    }
    for path, row in by_path.items():
        out[path] = row
    if len(by_path) == 2:
        out["c_over_python"] = round(by_path["c"]["supervisor_events_per_s"]
                                     / by_path["python"]["supervisor_events_per_s"], 2)  # fmt: skip
    return out


def _median(rows: list[dict]) -> dict:
    """Each figure's median over the rounds (the events are the same in every round)."""
    return {k: (statistics.median(r[k] for r in rows) if k != "events" else rows[0][k])
            for k in rows[0]}  # fmt: skip


def supervise(log_path: str, path: str = "python") -> dict:
    """The supervisor's work on a finished log, timed: read, decode, write (CPU seconds). On
    the C path reading and decoding are one pass (`read_us_per_event` holds both)."""
    from ttrecord.events import SessionStatus
    from ttrecord.recorder.decode import Decoder
    from ttrecord.recorder.log import LogReader
    from ttrecord.recorder.pipeline import open_pipeline
    from ttrecord.store.writer import SessionWriter

    reader, decoder = LogReader(log_path), Decoder()
    read_s = decode_s = write_s = 0.0
    db = Path(log_path).with_suffix(f".{path}.db")
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    writer = SessionWriter(db)
    pipeline = open_pipeline(db) if path == "c" else None
    if path == "c" and pipeline is None:
        raise SystemExit("the C pipeline is not available here")
    writer.start(script="model.py", argv=["model.py"], backend="emulator")
    n = 0
    while True:  # as the supervisor drains: one read, its events decoded, written in batches
        c0 = time.thread_time()
        if pipeline is not None:
            pipeline.read(reader, 4 << 20)
            c1 = c2 = time.thread_time()
            n += pipeline.write_ready()
        else:
            records = list(reader.read(4 << 20))
            c1 = time.thread_time()
            decoder.feed(records)
            events = decoder.ready()
            c2 = time.thread_time()
            for i in range(0, len(events), 5000):
                writer.add(events[i : i + 5000])
            n += len(events)
        c3 = time.thread_time()
        read_s, decode_s, write_s = read_s + c1 - c0, decode_s + c2 - c1, write_s + c3 - c2
        if not reader.more:
            break
    c0 = time.thread_time()
    if pipeline is not None:
        pipeline.close()
    writer.finish(SessionStatus.OK, exit_code=0)
    finish_s = time.thread_time() - c0
    writer.close()
    reader.close()
    total = read_s + decode_s + write_s + finish_s
    return {
        "events": n,
        "supervisor_us_per_event": round(total / n * 1e6, 2),
        "supervisor_events_per_s": round(n / total),
        "read_us_per_event": round(read_s / n * 1e6, 2),
        "decode_us_per_event": round(decode_s / n * 1e6, 2),
        "write_us_per_event": round((write_s + finish_s) / n * 1e6, 2),
        "finish_us_per_event": round(finish_s / n * 1e6, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=20_000, help="loop iterations (3 ops)")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds per path")
    parser.add_argument("--supervise", metavar="LOG", help=argparse.SUPPRESS)
    parser.add_argument("--path", choices=("c", "python"), default="python",
                        help=argparse.SUPPRESS)  # fmt: skip
    opts = parser.parse_args()
    if opts.supervise:
        print(json.dumps(supervise(opts.supervise, opts.path)), flush=True)
        return
    print(json.dumps(measure(opts.iterations, opts.rounds)), flush=True)


if __name__ == "__main__":
    main()
