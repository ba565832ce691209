"""Readers of a session that has no indexes yet (still recording, or its recorder was killed).

A session gets its indexes when its recording finishes; before that, every reader reads an
indexed copy (`ttrecord.store.snapshot`). This prints, for `report --html`, `export perfetto`
and `check` on the same 300,000-event session with and without its indexes, the CPU seconds of
each (in this process: the commands run in-process, one after the other) and their ratio:
unindexed ÷ indexed, target at most 3× (the copy and the index build are a few table passes).
Without the copy, `report --html` alone took minutes at this size.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.synthetic import cached_session
from ttrecord.cli.main import main

EVENTS = 300_000
TARGET_RATIO = 3.0
COMMANDS = {
    "report --html": lambda s, out: ["report", "--html", str(s), "-o", str(out / "r.html"), "-f"],
    "export perfetto": lambda s, out: ["export", "perfetto", str(s), "-o", str(out / "p.json"), "-f"],
    "check": lambda s, out: ["check", str(s), "--allow-empty", "--format", "json"],
}


def unindexed_copy(source: Path, dest: Path) -> None:
    """`source` as a recording looks before it finishes: no indexes, status `running`."""
    shutil.copy(source, dest)
    conn = sqlite3.connect(dest)
    names = [r[0] for r in conn.execute(
        "SELECT name FROM sqlite_master WHERE type = 'index' AND name LIKE 'idx_%'")]  # fmt: skip
    for name in names:
        conn.execute(f"DROP INDEX [{name}]")
    conn.execute("UPDATE session SET status = 'running'")
    conn.commit()
    conn.close()


def forget_findings(path: Path) -> None:
    conn = sqlite3.connect(path)
    for table in ("findings", "findings_stamp"):
        try:
            conn.execute(f"DELETE FROM [{table}]")
        except sqlite3.OperationalError:
            pass  # never checked
    conn.commit()
    conn.close()


def cpu_of(argv: list[str]) -> float:
    start = time.process_time()
    try:
        main(argv)
    except SystemExit:
        pass
    return time.process_time() - start


def main_bench() -> None:
    source = cached_session(EVENTS)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        indexed, unindexed = out / "indexed.db", out / "unindexed.db"
        shutil.copy(source, indexed)
        unindexed_copy(source, unindexed)
        devnull = os.open(os.devnull, os.O_WRONLY)
        saved = os.dup(1), os.dup(2)
        for name, argv in COMMANDS.items():
            os.dup2(devnull, 1), os.dup2(devnull, 2)
            forget_findings(indexed)  # both analysed: neither reads findings a reader stored
            try:
                a = cpu_of(argv(indexed, out))
                b = cpu_of(argv(unindexed, out))
            finally:
                sys.stdout.flush(), sys.stderr.flush()
                os.dup2(saved[0], 1), os.dup2(saved[1], 2)
            print(json.dumps({
                "benchmark": "unfinished_readers", "command": name, "events": EVENTS,
                "indexed_cpu_s": round(a, 2), "unindexed_cpu_s": round(b, 2),
                "ratio": round(b / a, 2) if a else None, "target_ratio": TARGET_RATIO,
            }), flush=True)


if __name__ == "__main__":
    main_bench()
