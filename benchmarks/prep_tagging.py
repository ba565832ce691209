"""Time of finding every capture's prep run when a session closes, for two versions of the code.

The writer's `finish` tags each capture's prep run (`ttrecord.store.prep.tag_prep_runs`). This
builds the `many` session of `check_captures` (1,000 capture cycles at N_EVENTS events: eager
decode steps, a prep run, the capture, replays) once, then for the code at HEAD ("after") and at
`--before REF` (default: the merge base with `main`), alternating, best of `--rounds`: copies the
file, turns its `prep` tags back into `eager`, and times that version's `tag_prep_runs` on it
(CPU seconds, in this process; only `store/prep.py` differs between the two). It also says how
many events each tagged, so a version that finds fewer prep runs shows.

    python -m benchmarks.prep_tagging [N_EVENTS] [--before REF] [--rounds 3]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]
CYCLES = 1_000


def _prep_module(ref: str, folder: Path) -> ModuleType:
    """`ttrecord/store/prep.py` as it is at `ref`, imported under its own name."""
    text = subprocess.run(["git", "show", f"{ref}:ttrecord/store/prep.py"], cwd=ROOT, check=True,
                          capture_output=True, text=True).stdout  # fmt: skip
    path = folder / f"prep_{ref}.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location(f"prep_{ref}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def _time_tagging(module: ModuleType, session: Path, scratch: Path) -> tuple[float, int]:
    shutil.copy(session, scratch)
    conn = sqlite3.connect(scratch, isolation_level=None)
    conn.execute("UPDATE events SET phase = 'eager' WHERE phase = 'prep'")
    conn.execute("UPDATE buffers SET alloc_phase = 'eager' WHERE alloc_phase = 'prep'")
    conn.execute("BEGIN")
    c0 = time.process_time()
    tagged = module.tag_prep_runs(conn)
    cpu = time.process_time() - c0
    conn.execute("ROLLBACK")
    conn.close()
    return cpu, tagged


def measure(n_events: int, before: str, rounds: int) -> list[dict]:
    from benchmarks.check_captures import build

    rows: list[dict] = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        session = folder / "many.db"
        events = build(session, n_events, CYCLES)
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, check=True,
                              capture_output=True, text=True).stdout.strip()  # fmt: skip
        codes = {"before": (before, _prep_module(before, folder)),
                 "after": (head, _prep_module(head, folder))}  # fmt: skip
        best: dict[str, tuple[float, int]] = {}
        for _ in range(rounds):
            for label, (_ref, module) in codes.items():
                cpu, tagged = _time_tagging(module, session, folder / "scratch.db")
                if label not in best or cpu < best[label][0]:
                    best[label] = (cpu, tagged)
        for label, (ref, _module) in codes.items():
            cpu, tagged = best[label]
            rows.append({"benchmark": "prep_tagging", "code": label, "ref": ref, "events": events,
                         "captures": CYCLES, "cpu_s": round(cpu, 3), "events_tagged": tagged,
                         "rounds": rounds})  # fmt: skip
    return rows


def main(argv: list[str] | None = None) -> list[dict]:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.prep_tagging")
    parser.add_argument("events", nargs="?", type=int, default=1_000_000)
    parser.add_argument("--before", default=None, help="a commit (default: merge base with main)")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    before = args.before or subprocess.run(["git", "merge-base", "HEAD", "main"], cwd=ROOT, check=True,
                                           capture_output=True, text=True).stdout.strip()[:10]  # fmt: skip
    rows = measure(args.events, before, args.rounds)
    for row in rows:
        print(json.dumps(row), flush=True)
    return rows


if __name__ == "__main__":
    sys.exit(0 if main() else 1)
