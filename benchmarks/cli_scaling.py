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
        [--before DIR] [--shapes decode,cycles] [--commands check,report,...]

`--code DIR` runs another checkout's ttrecord (its folder goes first on PYTHONPATH), for
before/after figures on the very same session files. `--before DIR` measures that checkout
and this one in the same run, each command of each session back to back (each on its own
copy of the session, since `check` stores findings in it), so load on a shared machine falls
on both alike. `--commands` keeps only the named steps (`report (findings stored)` runs
`check` first either way).
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
    if diff_ops:
        found["diff-a"], found["diff-b"] = diff_speed.sessions(diff_ops)
    return found


def _steps(session: Path, out: Path, folder: Path) -> list[tuple[str, list[str]]]:
    return [
        ("report", ["report", str(session)]),
        ("export perfetto", ["export", "perfetto", str(session), "-o", str(out), "-f"]),
        ("export visualizer", ["export", "visualizer", str(session), "-o", str(folder), "-f"]),
        ("check", ["check", str(session)]),
        ("report (findings stored)", ["report", str(session)]),
    ]


def measure(paths: dict[str, Path], sizes: list[int], codes: list[tuple[str | None, str]],
            shapes: tuple[str, ...] = ("decode", "cycles"), commands: set[str] | None = None,
            diff: bool = True) -> list[dict]:  # fmt: skip
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for shape in shapes:
            for n in sizes:
                # A private copy per code: `check` stores findings in the session it reads.
                copies = {}
                for _code, label in codes:
                    copies[label] = Path(tmp) / f"{shape}-{n}-{label}.db"
                    shutil.copyfile(paths[f"{shape}-{n}"], copies[label])
                out, folder = Path(tmp) / "trace.json", Path(tmp) / "visualizer"
                for i, (command, _) in enumerate(_steps(Path(tmp), out, folder)):
                    wanted = commands is None or command in commands or (
                        command == "check" and "report (findings stored)" in commands)
                    if not wanted:
                        continue
                    for code, label in codes:
                        argv = _steps(copies[label], out, folder)[i][1]
                        row = {"benchmark": "cli_scaling", "code": label, "command": command,
                               "session": shape, "events": n, **run(argv, code)}  # fmt: skip
                        print(json.dumps(row), flush=True)
                        rows.append(row)
                        out.unlink(missing_ok=True)
                        shutil.rmtree(folder, ignore_errors=True)
                for copy in copies.values():
                    copy.unlink()
    if not diff:
        return rows
    for code, label in codes:
        rows += _diffs(paths, code, label)
    return rows


def _diffs(paths: dict[str, Path], code: str | None, label: str) -> list[dict]:
    rows = []
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
    parser.add_argument("--before", help="folder of an earlier checkout to measure alongside")
    parser.add_argument("--shapes", default="decode,cycles")
    parser.add_argument("--commands", help="comma-separated steps to keep (default: all)")
    args = parser.parse_args(argv)
    if not shutil.which(_TIME):
        print(json.dumps({"benchmark": "cli_scaling", "skipped": f"{_TIME} not found"}))
        return []
    sizes = [int(s) for s in args.sizes.split(",")]
    commands = set(args.commands.split(",")) if args.commands else None
    diff = commands is None or bool(commands & {"diff", "diff --format json"})
    paths = sessions(sizes, args.diff_ops if diff else 0)
    codes = [(args.before, "before")] if args.before else []
    codes.append((args.code, args.label if not args.before else "after"))
    return measure(paths, sizes, codes, tuple(args.shapes.split(",")), commands, diff)


if __name__ == "__main__":
    main()
