"""The supervisor's work per event in instructions: a recorded log read, decoded and written.

The CPU time of `benchmarks.pipeline` follows the machine's load (2-7× on a shared machine);
instructions do not. An op loop is recorded into a log as in `benchmarks.pipeline`, then a child
under `valgrind --tool=callgrind` runs the supervisor's stages on it, each entered through a
ctypes callback so `--toggle-collect=ffi_call --dump-after=ffi_call` counts exactly that stage
(one dump file per stage): reading the log (`LogReader.read`), decoding its records into events
(`Decoder.feed/ready`), writing them in the supervisor's batches (`SessionWriter.add`) and
`finish` (indexes, prep runs, checkpoint). Both paths run on the same log: the C pipeline
(store/ext/pipeline.c; its read stage unmarshals and decodes in one pass, so its decode stage is
empty) and the pure-Python one. Printed: instructions per event of each stage and in all, per
path. Syscalls (the writes themselves) are not instructions of this process and are not counted.
Run: python -m benchmarks.pipeline_instructions [--iterations N]
"""

from __future__ import annotations

import argparse
import ctypes
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
STAGES = ("read", "decode", "write", "finish")
BATCH = 5000  # events per SessionWriter.add, as the supervisor and benchmarks.pipeline


def record_log(folder: str, iterations: int) -> str:
    """Record the add/relu/multiply loop at 5,000 live buffers into a log in `folder`."""
    import torch

    from benchmarks.alternatives import emulator_backend, op_loop, recorded_ttnn

    torch.set_num_threads(1)
    b = emulator_backend()
    weights = [b.raw.relu(b.x) for _ in range(5000)]  # noqa: F841 - live throughout
    module, recorder = recorded_ttnn(b.raw, b.dev, folder, callsites=True, tag="pipe")
    op_loop(module, b.x, iterations)
    recorder.finish()
    recorder.log.close()
    return os.path.join(folder, "log-Truepipe")


def stages(log_path: str, db: str, path: str = "python") -> None:
    """The supervisor's stages on a finished log, each inside one ctypes callback."""
    from ttrecord.events import SessionStatus
    from ttrecord.recorder.decode import Decoder
    from ttrecord.recorder.log import LogReader
    from ttrecord.recorder.pipeline import open_pipeline
    from ttrecord.store.writer import SessionWriter

    reader, decoder = LogReader(log_path), Decoder()
    writer = SessionWriter(db)
    pipeline = open_pipeline(db) if path == "c" else None
    writer.start(script="model.py", argv=["model.py"], backend="emulator")
    chunks: list[list[tuple]] = []
    events: list[Any] = []
    written = [0]

    def read() -> None:
        while True:
            if pipeline is not None:
                pipeline.read(reader, 4 << 20)
            else:
                chunks.append(list(reader.read(4 << 20)))
            if not reader.more:
                return

    def decode() -> None:
        for records in chunks:
            decoder.feed(records)
            events.extend(decoder.ready())

    def write() -> None:
        if pipeline is not None:
            written[0] = pipeline.write_ready()
            return
        for i in range(0, len(events), BATCH):
            writer.add(events[i : i + BATCH])
        written[0] = len(events)

    def finish() -> None:
        if pipeline is not None:
            pipeline.close()
        writer.finish(SessionStatus.OK, exit_code=0)

    runs: dict[str, Callable[[], None]] = {"read": read, "decode": decode, "write": write,
                                           "finish": finish}  # fmt: skip
    for name in STAGES:
        ctypes.CFUNCTYPE(None)(runs[name])()  # one callgrind dump holds this stage alone
    writer.close()
    reader.close()
    print(json.dumps({"events": written[0], "bytes": os.path.getsize(db)}), flush=True)


def _total(dump: str) -> int:
    return next(int(line.split()[1]) for line in dump.splitlines() if line.startswith("totals:"))


def count(log_path: str, tmp: str, path: str = "python") -> dict:
    out = os.path.join(tmp, f"cg-{path}.out")
    cmd = ["valgrind", "--tool=callgrind", "--collect-atstart=no", "--toggle-collect=ffi_call",
           "--dump-after=ffi_call", f"--callgrind-out-file={out}", sys.executable, "-m",
           "benchmarks.pipeline_instructions", "--stages", log_path, os.path.join(tmp, f"{path}.db"),
           "--path", path]  # fmt: skip
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=1800)
    if proc.returncode != 0:
        raise RuntimeError((proc.stderr.strip().splitlines() or ["failed"])[-1])
    facts = json.loads(proc.stdout.strip().splitlines()[-1])
    dumps = sorted(glob.glob(out + ".*"), key=lambda p: int(p.rsplit(".", 1)[1]))
    totals = [_total(Path(p).read_text()) for p in dumps]
    if len(totals) != len(STAGES):
        raise RuntimeError(f"expected {len(STAGES)} callgrind dumps, found {len(totals)}")
    n = facts["events"]
    row = {f"{name}_instr_per_event": round(total / n) for name, total in zip(STAGES, totals)}
    return {"events": n, **row, "instr_per_event": round(sum(totals) / n),
            "bytes_per_event": round(facts["bytes"] / n, 1)}  # fmt: skip


def measure(iterations: int) -> dict:
    if shutil.which("valgrind") is None:
        return {"benchmark": "pipeline_instructions", "error": "valgrind is not installed"}
    tmp = tempfile.mkdtemp(prefix="ttrecord-cg-")
    try:
        from ttrecord.store import native

        log_path = record_log(tmp, iterations)
        paths = ["c", "python"] if native.choose()[0] is not None else ["python"]
        by_path = {path: count(log_path, tmp, path) for path in paths}
        out = {"benchmark": "pipeline_instructions", "path": paths[0], **by_path[paths[0]]}
        out.update(by_path)
        out["load_avg_1m"] = round(os.getloadavg()[0], 2)
        return out
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=2000, help="loop iterations (3 ops)")
    parser.add_argument("--stages", nargs=2, metavar=("LOG", "DB"), help=argparse.SUPPRESS)
    parser.add_argument("--path", choices=("c", "python"), default="python",
                        help=argparse.SUPPRESS)  # fmt: skip
    opts = parser.parse_args()
    if opts.stages:
        stages(*opts.stages, opts.path)
        return
    print(json.dumps(measure(opts.iterations)), flush=True)


if __name__ == "__main__":
    main()
