"""What the reading commands cost per event, counted in instructions (which load does not move)
next to CPU time.

The session is `check_speed`'s traced decode program (20 captures, half eager steps, half the
replay loop) at `--events` events, written through the real writer. Each command runs through
`ttrecord.cli.main.main` in a child process, once to warm up (imports, SQLite's page cache),
then once more counted, each run on a fresh copy of the session (`check` and `report` keep
what they found in the session file, which a second run would only read back):
  check      `ttrecord check S --format json` (loading and every rule)
  report     `ttrecord report S --format json`
  perfetto   `ttrecord export perfetto S -o out.json`
  diff       `ttrecord diff S:1 S:2 --format json` (two of its captures)
  sessions   `ttrecord sessions DIR --format json`
Instructions: the counted run is entered through a ctypes callback, so callgrind's
`--toggle-collect=ffi_call --dump-after=ffi_call` counts exactly that run (one dump each); CPU:
the same counted runs in a plain child, CPU time of the process, medians over rounds.
Run: python -m benchmarks.reader_instructions [--events N] [--rounds R] [--no-valgrind]
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import glob
import io
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.recorder_instructions import ROOT, _instrument_on, _total

COMMANDS = ("check", "report", "perfetto", "diff", "sessions")


def argv_of(name: str, session: Path, out: Path) -> list[str]:
    s = str(session)
    return {
        "check": ["check", s, "--format", "json"],
        "report": ["report", s, "--format", "json"],
        "perfetto": ["export", "perfetto", s, "-o", str(out / "trace.json"), "--force"],
        "diff": ["diff", f"{s}:1", f"{s}:2", "--format", "json"],
        "sessions": ["sessions", str(session.parent), "--format", "json"],
    }[name]


def _run(argv: list[str]) -> None:
    from ttrecord.cli.main import main

    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        try:
            main(argv)
        except SystemExit:
            pass


def _fresh(session: Path, n: int) -> Path:
    """A copy of the session as the writer left it, in a folder of its own (`check` and
    `report` store what they found in the session, which a second run would only read)."""
    folder = session.parent / f"run{n}"
    folder.mkdir()
    copy = folder / session.name
    shutil.copyfile(session, copy)
    return copy


def child(mode: str, session: Path, rounds: int) -> None:
    """Each command warmed, then counted (mode "count": one callgrind dump each) or timed, on
    a fresh copy of the session each time."""
    if mode == "count":
        _instrument_on()
    n = 0
    for name in COMMANDS:
        runs = 1 if mode == "count" else rounds
        argvs = []
        for _ in range(1 + runs):
            n += 1
            copy = _fresh(session, n)
            argvs.append(argv_of(name, copy, copy.parent))
        _run(argvs[0])  # warm: imports, the file in the page cache
        if mode == "count":
            callback = ctypes.CFUNCTYPE(None)(lambda a=argvs[1]: _run(a))
            callback()
            print(json.dumps({"command": name}), flush=True)
        else:
            samples = []
            for argv in argvs[1:]:
                start = time.process_time()
                _run(argv)
                samples.append(time.process_time() - start)
            print(json.dumps({"command": name, "cpu_s": statistics.median(samples)}), flush=True)


def _rows(cmd: list[str]) -> list[dict]:
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=3000)
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["failed"])[-1]
        raise RuntimeError(f"{' '.join(cmd[:3])}: {last}")
    return [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=20_000, help="events in the session")
    parser.add_argument("--rounds", type=int, default=5, help="CPU timings per command")
    parser.add_argument("--no-valgrind", action="store_true", help="CPU time only")
    parser.add_argument("--child", choices=("count", "time"), help=argparse.SUPPRESS)
    parser.add_argument("--session", help=argparse.SUPPRESS)
    opts = parser.parse_args()
    if opts.child:
        child(opts.child, Path(opts.session), opts.rounds)
        return

    from benchmarks.check_speed import build

    tmp = Path(tempfile.mkdtemp(prefix="ttrecord-readers-"))
    try:
        session = tmp / "decode.db"
        b = build(opts.events)
        b.write(session, script="/models/decoder.py")
        events = len(b.events)
        del b
        def me(mode: str) -> list[str]:  # each child copies the session into its own folder
            folder = tmp / mode
            folder.mkdir()
            shutil.copyfile(session, folder / session.name)
            return [sys.executable, "-m", "benchmarks.reader_instructions", "--child", mode,
                    "--session", str(folder / session.name), "--rounds", str(opts.rounds)]  # fmt: skip

        cpu = {r["command"]: r["cpu_s"] for r in _rows(me("time"))}
        counted: dict[str, float] = {}
        if not opts.no_valgrind and shutil.which("valgrind"):
            prefix = str(tmp / "cg.out")
            _rows(["valgrind", "--tool=callgrind", "--instr-atstart=no",
                   "--toggle-collect=ffi_call", "--dump-after=ffi_call",
                   f"--callgrind-out-file={prefix}", *me("count")])  # fmt: skip
            dumps = sorted(glob.glob(prefix + ".*"), key=lambda p: int(p.rsplit(".", 1)[1]))
            totals = [_total(Path(p).read_text()) for p in dumps]
            counted = dict(zip(COMMANDS, totals))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    row: dict = {"benchmark": "reader_instructions", "events": events}
    print(f"reading commands on a {events:,}-event session (20 captures)")
    for name in COMMANDS:
        per_event = counted[name] / events if name in counted else None
        row[f"{name}_cpu_s"] = round(cpu[name], 3)
        row[f"{name}_cpu_us_per_event"] = round(cpu[name] / events * 1e6, 2)
        if per_event is not None:
            row[f"{name}_instructions"] = counted[name]
            row[f"{name}_instructions_per_event"] = round(per_event)
        shown = f"{per_event / 1000:7.1f}k instructions per event" if per_event else ""
        print(f"  {name:9s} {cpu[name]:7.3f} s CPU ({cpu[name] / events * 1e6:5.2f} µs per event)"
              f"  {shown}")  # fmt: skip
    row["load_avg_1m"] = round(os.getloadavg()[0], 2)
    print(json.dumps(row))


if __name__ == "__main__":
    main()
