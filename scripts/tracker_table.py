"""Side by side, per sample: what ttnn's trace allocation tracker reports and what ttrecord reports.

Both columns come from runs on the emulator: the tracker column from the sample run with
TT_METAL_TRACE_ALLOC_TRACKING=1 (the emulator's tracker behaves as ttnn 0.81.1's), the ttrecord
column from `ttrecord run --backend emulator` then `ttrecord check --format json`.

    python scripts/tracker_table.py              # print the markdown table
    python scripts/tracker_table.py --check FILE # exit 1 unless FILE holds exactly these rows
    python scripts/tracker_table.py NAME ...     # only these samples
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "samples"
SKIP = {"hang_in_replay", "crash_in_replay"}  # they hang or die by design
_WIDTH = 80  # characters of the exception line shown
FOUND = re.compile(r"Found (\d+) device buffer\(s\) still alive before trace replay")


def _env(**extra: str) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TT_METAL_TRACE_ALLOC", "TTRECORD_EMULATOR"))}
    env.update(extra)
    return env


def tracker_column(sample: str) -> str:
    p = subprocess.run([sys.executable, str(SAMPLES / f"{sample}.py")], capture_output=True, text=True,
                       env=_env(TT_METAL_TRACE_ALLOC_TRACKING="1"), cwd=ROOT, timeout=300)  # fmt: skip
    m = FOUND.search(p.stderr)
    if m:
        return f"raises at execute_trace: {m.group(1)} buffer(s) alive"
    if p.returncode != 0:
        return f"nothing (the run stops: {stopped_by(p.stderr) or f'exit {p.returncode}'})"
    return "nothing"


def stopped_by(stderr: str, width: int = _WIDTH) -> str | None:
    """The first line of the exception that ended the run ("RuntimeError: TT_FATAL @ …"),
    shortened: the line after the last traceback's frames, not the last line of stderr (ttnn's
    errors go on with info and backtrace lines). Pipes are escaped for the markdown table."""
    lines = stderr.splitlines()
    starts = [i for i, line in enumerate(lines) if line.startswith("Traceback (most recent call last)")]
    if not starts:
        return None
    line = next((x for x in lines[starts[-1] + 1 :] if x.strip() and not x.startswith((" ", "\t"))), None)
    if line is None:
        return None
    line = re.sub(r"@ \S*/(\S+)", r"@ \1", line.strip())  # TT_FATAL's source path: its file
    if len(line) > width:
        line = line[: width - 1].rstrip() + "…"
    return line.replace("|", "\\|")


def ttrecord_column(sample: str) -> str:
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "s.db"
        subprocess.run([sys.executable, "-m", "ttrecord", "run", "--backend", "emulator", "-o", str(db),
                        str(SAMPLES / f"{sample}.py")], capture_output=True, env=_env(), cwd=ROOT,
                       timeout=300)  # fmt: skip
        p = subprocess.run([sys.executable, "-m", "ttrecord", "check", str(db), "--format", "json",
                            "--allow-incomplete"], capture_output=True, text=True, cwd=ROOT,
                           timeout=300)  # fmt: skip
    findings = json.loads(p.stdout)["findings"] if p.stdout.strip() else []
    counts = Counter(f"{f['id']} {f['severity']}" for f in findings)
    return ", ".join(f"{k}" + (f" ×{n}" if n > 1 else "") for k, n in sorted(counts.items())) or "nothing"


def row(sample: str) -> str:
    return f"| `{sample}` | {tracker_column(sample)} | {ttrecord_column(sample)} |"


def table(samples: list[str]) -> list[str]:
    with ThreadPoolExecutor(max_workers=2) as pool:
        rows = list(pool.map(row, samples))
    return ["| sample | ttnn's tracker (`TT_METAL_TRACE_ALLOC_TRACKING=1`) | ttrecord check |",
            "|---|---|---|", *rows]  # fmt: skip


def main(argv: list[str]) -> int:
    check = None
    if argv[:1] == ["--check"]:
        check, argv = Path(argv[1]), argv[2:]
    names = argv or sorted(p.stem for p in SAMPLES.glob("*.py") if p.stem not in SKIP)
    lines = table(names)
    if check is None:
        print("\n".join(lines))
        return 0
    text = check.read_text()
    missing = [line for line in lines[2:] if line not in text]
    for line in missing:
        print(f"not in {check}: {line}")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
