"""Runs every benchmark and prints one JSON line per figure, then a short table.

The first line describes the machine (cores, CPU, RAM, python, load average); every row gets
the 1-minute load average at the end of its benchmark unless it reports its own.

Each benchmark is a module in this folder that prints JSON objects (one per line, each with a
"benchmark" key) when run as `python -m benchmarks.<name>`. They run one at a time in their
own process so one cannot warm caches for the next. `--only NAME` runs a subset.
`--write-results` rewrites the Targets table at the top of RESULTS.md from this run (the
current figures against the current targets, `benchmarks/targets.py`); `--targets` prints it;
`--from run.jsonl` builds either from a saved run's JSON lines instead of running.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

HERE = Path(__file__).parent
SKIP = {"__init__", "__main__", "synthetic", "targets"}
TIMEOUT_S = 600  # per benchmark; a hung one must not hang the run


def machine() -> dict:
    """The facts a figure needs next to it: cores, CPU, memory, python, load right now."""
    cpu = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        ram = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError):
        ram = 0
    return {
        "benchmark": "machine",
        "nproc": os.cpu_count(),
        "cpu": cpu or platform.processor(),
        "ram_gb": round(ram / 2**30, 1),
        "python": platform.python_version(),
        "load_avg": [round(x, 2) for x in os.getloadavg()],
    }


def discover() -> list[str]:
    return sorted(p.stem for p in HERE.glob("*.py") if p.stem not in SKIP)


def run_one(name: str) -> tuple[list[dict], str]:
    try:
        proc = subprocess.run(
            [sys.executable, "-m", f"benchmarks.{name}"],
            cwd=HERE.parent,
            capture_output=True,
            text=True,
            timeout=TIMEOUT_S,
        )
    except subprocess.TimeoutExpired:
        return [], f"timed out after {TIMEOUT_S} s"
    rows = []
    for line in proc.stdout.splitlines():
        line = line.strip()
        if line.startswith("{"):
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError:
                continue
    error = "" if proc.returncode == 0 else (proc.stderr.strip().splitlines() or ["failed"])[-1]
    return rows, error


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    parser.add_argument("--only", action="append", default=[], help="run only this benchmark")
    parser.add_argument("--targets", action="store_true", help="print the Targets table (markdown)")
    parser.add_argument("--write-results", action="store_true",
                        help="rewrite the Targets table of benchmarks/RESULTS.md from this run")
    parser.add_argument("--keep", action="store_true",
                        help="with --write-results: targets this run did not measure keep their rows")
    parser.add_argument("--from", dest="saved", type=Path,
                        help="a saved run's JSON lines: build the table from them, run nothing")
    args = parser.parse_args(argv)
    if args.saved is not None:
        saved = [json.loads(ln) for ln in args.saved.read_text().splitlines() if ln.startswith("{")]
        return _targets(saved, args.targets, args.write_results, args.keep)
    names = args.only or discover()
    console = Console(stderr=True)
    host = machine()
    table = Table("benchmark", "figures", "seconds", title="ttrecord benchmarks",
                  caption=f"{host['nproc']} cores, {host['cpu']}, {host['ram_gb']} GB, "
                          f"python {host['python']}, load at start {host['load_avg']}")  # fmt: skip
    failed = False
    collected: list[dict] = []
    print(json.dumps(host), flush=True)
    for name in names:
        console.print(f"[dim]running {name}…[/]")
        t0 = time.perf_counter()
        rows, error = run_one(name)
        elapsed = time.perf_counter() - t0
        load = round(os.getloadavg()[0], 2)  # other work on the machine while this one ran
        for row in rows:
            row.setdefault("load_avg_1m", load)
            print(json.dumps(row), flush=True)
        collected += rows
        if error:
            failed = True
            table.add_row(name, f"[red]{error}[/]", f"{elapsed:.1f}")
            continue
        for row in rows:
            figures = ", ".join(f"{k}={v}" for k, v in row.items() if k != "benchmark")
            table.add_row(str(row.get("benchmark", name)), figures, f"{elapsed:.1f}")
    console.print(table)
    _targets(collected, args.targets, args.write_results, args.keep)
    return 1 if failed else 0


def _targets(rows: list[dict], show: bool, write: bool, keep: bool = False) -> int:
    from benchmarks import targets

    if show:
        print(targets.table(rows), file=sys.stderr)
    if write:
        targets.write(rows, keep=keep)
        print(f"rewrote the Targets table of {targets.RESULTS}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
