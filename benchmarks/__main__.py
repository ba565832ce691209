"""Runs every benchmark and prints one JSON line per figure, then a short table.

The first line describes the machine (cores, CPU, RAM, python, load average); every row gets
the 1-minute load average at the end of its benchmark unless it reports its own.

Each benchmark is a module in this folder that prints JSON objects (one per line, each with a
"benchmark" key) when run as `python -m benchmarks.<name>`. They run one at a time in their
own process so one cannot warm caches for the next. `--only NAME` runs a subset.
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
SKIP = {"__init__", "__main__", "synthetic"}
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
    args = parser.parse_args(argv)
    names = args.only or discover()
    console = Console(stderr=True)
    host = machine()
    table = Table("benchmark", "figures", "seconds", title="ttrecord benchmarks",
                  caption=f"{host['nproc']} cores, {host['cpu']}, {host['ram_gb']} GB, "
                          f"python {host['python']}, load at start {host['load_avg']}")  # fmt: skip
    failed = False
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
        if error:
            failed = True
            table.add_row(name, f"[red]{error}[/]", f"{elapsed:.1f}")
            continue
        for row in rows:
            figures = ", ".join(f"{k}={v}" for k, v in row.items() if k != "benchmark")
            table.add_row(str(row.get("benchmark", name)), figures, f"{elapsed:.1f}")
    console.print(table)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
