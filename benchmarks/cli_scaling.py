"""Time and peak memory of each reading command, end to end from the command line, by size.

Each command runs as `ttrecord …` in its own process under `/usr/bin/time`, so the figures
include start-up, reading, output and interpreter teardown, as a user sees them: wall seconds,
CPU seconds (user + system, what a busy shared machine does not distort) and peak resident
memory. Sessions (built once and cached, see `benchmarks.synthetic`):

- `decode`: a decode loop captured and replayed every 50 steps (998 captures at 1M events);
- `cycles`: 20 rounds of eager steps, a capture and a long replay loop (`check_speed.build`);
- `diff`: two captures of N ops that drift (`diff_speed.build`).

`report` runs twice per session: once with no findings stored (it analyses), once right after
`check` stored current ones (it reuses them). Growth per command is the ratio of CPU time (and
memory) between consecutive sizes: linear work triples from 100k to 300k events.

    python -m benchmarks.cli_scaling [--sizes 100000,300000,1000000] [--code DIR]

`--code DIR` runs another checkout's ttrecord (its folder goes first on PYTHONPATH), for
before/after figures on the very same session files.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks import synthetic

_TIME = "/usr/bin/time"
_FORMAT = "TTRECORD-TIME %e %U %S %M"


def run(argv: list[str], code: str | None, stdout: str = os.devnull) -> dict:
    """One command under /usr/bin/time: wall s, CPU s, peak RSS MB and its exit code."""
    env = dict(os.environ)
    if code:
        env["PYTHONPATH"] = code + os.pathsep + env.get("PYTHONPATH", "")
    cmd = [_TIME, "-f", _FORMAT, sys.executable, "-m", "ttrecord", *argv]
    with open(stdout, "w") as out:
        # From a neutral folder: `python -m` puts the working folder first on sys.path.
        proc = subprocess.run(cmd, stdout=out, stderr=subprocess.PIPE, text=True, env=env,
                              cwd=tempfile.gettempdir())
    line = [x for x in proc.stderr.splitlines() if x.startswith("TTRECORD-TIME")][-1]
    wall, user, system, rss_kb = line.split()[1:]
    exit_code = proc.returncode
    return {
        "wall_s": round(float(wall), 2),
        "cpu_s": round(float(user) + float(system), 2),
        "peak_rss_mb": round(int(rss_kb) / 1024, 1),
        "exit_code": exit_code,
    }


def sessions(sizes: list[int], diff_ops: int) -> dict[str, Path]:
    from benchmarks import diff_speed

    found: dict[str, Path] = {}
    for n in sizes:
        found[f"decode-{n}"] = synthetic.cached_session(n)
        found[f"cycles-{n}"] = synthetic.cached_cycles(n)
    a, b = diff_speed.sessions(diff_ops)
    found["diff-a"], found["diff-b"] = a, b
    return found


def measure(paths: dict[str, Path], sizes: list[int], code: str | None, label: str) -> list[dict]:
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for shape in ("decode", "cycles"):
            for n in sizes:
                # A private copy: `check` stores findings in the session it reads.
                session = Path(tmp) / f"{shape}-{n}.db"
                shutil.copyfile(paths[f"{shape}-{n}"], session)
                out = Path(tmp) / "trace.json"
                steps = [
                    ("report", ["report", str(session)]),
                    ("export perfetto", ["export", "perfetto", str(session), "-o", str(out), "-f"]),
                    ("check", ["check", str(session)]),
                    ("report (findings stored)", ["report", str(session)]),
                ]
                for command, argv in steps:
                    row = {"benchmark": "cli_scaling", "code": label, "command": command,
                           "session": shape, "events": n, **run(argv, code)}  # fmt: skip
                    print(json.dumps(row), flush=True)
                    rows.append(row)
                session.unlink()
                out.unlink(missing_ok=True)
    a, b = str(paths["diff-a"]), str(paths["diff-b"])
    for command, argv in (("diff", ["diff", a, b]), ("diff --format json", ["diff", a, b, "--format", "json"])):  # fmt: skip
        row = {"benchmark": "cli_scaling", "code": label, "command": command, "session": "diff",
               "events": None, **run(argv, code)}  # fmt: skip
        print(json.dumps(row), flush=True)
        rows.append(row)
    return rows


def main(argv: list[str] | None = None) -> list[dict]:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.cli_scaling")
    parser.add_argument("--sizes", default="100000,300000,1000000")
    parser.add_argument("--diff-ops", type=int, default=300_000)
    parser.add_argument("--code", help="folder of another ttrecord checkout to run instead")
    parser.add_argument("--label", default="current")
    args = parser.parse_args(argv)
    if not shutil.which(_TIME):
        print(json.dumps({"benchmark": "cli_scaling", "skipped": f"{_TIME} not found"}))
        return []
    sizes = [int(s) for s in args.sizes.split(",")]
    paths = sessions(sizes, args.diff_ops)
    return measure(paths, sizes, args.code, args.label)


if __name__ == "__main__":
    main()
