"""A whole traced decode loop under `ttrecord run` against plain `python`, in CPU time.

The program (written to a temporary file, run on the emulator in both cases) loads a small
model's weights (`--layers` decoder layers of matmul, gelu, matmul, add, then a head), runs one eager step, captures the step as a trace, then replays it for
`--steps` steps the way a serving loop does: the new token's input copied into the captured
input buffer (`copy_host_to_device_tensor`), `execute_trace`, the output read back. Each run is
a fresh process; its CPU time is user + system of every process it made (for `ttrecord run`:
the supervisor and the recorded child), read from `wait4`'s resource usage, so load on the
machine does not inflate it. Rounds alternate plain and recorded; medians are printed, with
the same program at one step to separate start-up from the loop.
Run: python -m benchmarks.decode_loop [--steps N] [--rounds R] [--layers L]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

PROGRAM = textwrap.dedent('''
    import sys
    import torch
    from ttrecord import emulator as ttnn

    HIDDEN, VOCAB = 64, 128
    steps, LAYERS = int(sys.argv[1]), int(sys.argv[2])
    torch.manual_seed(0)
    device = ttnn.open_device(device_id=0, trace_region_size=4 << 20)

    def weight(*shape):
        return ttnn.from_torch(torch.randn(*shape) / 8, dtype=ttnn.bfloat16,
                               layout=ttnn.TILE_LAYOUT, device=device)

    layers = [(weight(HIDDEN, HIDDEN), weight(HIDDEN, HIDDEN)) for _ in range(LAYERS)]
    head = weight(HIDDEN, VOCAB)
    embedding = torch.randn(VOCAB, HIDDEN)

    def step(x):
        for w1, w2 in layers:
            x = ttnn.add(x, ttnn.matmul(ttnn.gelu(ttnn.matmul(x, w1)), w2))
        return ttnn.softmax(ttnn.matmul(x, head), dim=-1)

    def host_input(token):
        rows = embedding[token].expand(32, HIDDEN).contiguous()
        return ttnn.from_torch(rows, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)

    x_in = ttnn.to_device(host_input(1), device)
    out = step(x_in)  # compile run
    tid = ttnn.begin_trace_capture(device, cq_id=0)
    out = step(x_in)
    ttnn.end_trace_capture(device, tid, cq_id=0)
    token = 1
    for _ in range(steps):
        ttnn.copy_host_to_device_tensor(host_input(token), x_in)
        ttnn.execute_trace(device, tid, cq_id=0, blocking=False)
        token = int(torch.argmax(ttnn.to_torch(out)[0].float())) % VOCAB
    ttnn.release_trace(device, tid)
    ttnn.close_device(device)
''')


def cpu_of(argv: list[str], env: dict[str, str]) -> float:
    """CPU seconds (user + system) of `argv` and every process it waited for."""
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    if proc.returncode != 0:
        raise SystemExit(f"{argv[:4]} failed ({proc.returncode}): {err.strip()[-300:]}")
    return float(usage.ru_utime + usage.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=600, help="decode steps replayed")
    parser.add_argument("--rounds", type=int, default=5, help="runs of each variant")
    parser.add_argument("--layers", type=int, default=4,
                        help="decoder layers per step (4 ops each; fewer: a lighter step)")
    opts = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="ttrecord-decode-"))
    program = tmp / "decode.py"
    program.write_text(PROGRAM)
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    ttrecord = [sys.executable, "-m", "ttrecord", "run", "-q", "--backend", "emulator"]
    times: dict[str, list[float]] = {}
    for _ in range(opts.rounds):
        for steps in (1, opts.steps):
            times.setdefault(f"plain {steps}", []).append(
                cpu_of([sys.executable, str(program), str(steps), str(opts.layers)], env))
            out = tmp / f"s{steps}.db"
            times.setdefault(f"recorded {steps}", []).append(
                cpu_of(ttrecord + ["-o", str(out), str(program), str(steps), str(opts.layers)], env))
            out.unlink(missing_ok=True)
    med = {k: statistics.median(v) for k, v in times.items()}
    n = opts.steps
    plain, recorded = med[f"plain {n}"], med[f"recorded {n}"]
    loop_plain = plain - med["plain 1"]
    loop_recorded = recorded - med["recorded 1"]
    print(f"CPU seconds, median of {opts.rounds} runs (all processes of each run), "
          f"{opts.layers} layers")
    for key, value in med.items():
        print(f"  {key:>14} steps  {value:7.3f} s")
    print(f"whole run, recorded ÷ plain: {recorded / plain:.2f}×")
    print(f"per step after start-up: plain {loop_plain / (n - 1) * 1e6:.0f} µs, "
          f"recorded {loop_recorded / (n - 1) * 1e6:.0f} µs ({loop_recorded / loop_plain:.2f}×)")
    print(json.dumps({
        "benchmark": "decode_loop",
        "steps": n,
        "layers": opts.layers,
        "plain_cpu_s": round(plain, 3),
        "recorded_cpu_s": round(recorded, 3),
        "ratio": round(recorded / plain, 3),
        "startup_plain_cpu_s": round(med["plain 1"], 3),
        "startup_recorded_cpu_s": round(med["recorded 1"], 3),
        "step_plain_us": round(loop_plain / (n - 1) * 1e6, 1),
        "step_recorded_us": round(loop_recorded / (n - 1) * 1e6, 1),
        "loop_ratio": round(loop_recorded / loop_plain, 3),
        "target_ratio": 1.3,
    }))


if __name__ == "__main__":
    main()
