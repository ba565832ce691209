"""Damaged session contents never give a traceback (issue problem 9): a seeded fuzz test
mutates cells of real sessions and runs every reader over each mutant.

Seeds are fixed (CI runs the same cases every time); TTRECORD_FUZZ_CASES raises the count
for a longer local run. Each case's seed is in its test id, so a failure is reproducible."""

from __future__ import annotations

import os
import random
import shutil
import sqlite3
from pathlib import Path

import pytest

from tests.reliability.hostile import build_hostile
from tests.tui.tui_sessions import build_alloc_after_capture
from ttrecord.cli.main import main

CASES = int(os.environ.get("TTRECORD_FUZZ_CASES", "40"))
VALUES = [None, "garbage{", '{"a": ', "[]", "{}", "null", '"x"', "bogus", -1, 0, 2**62,
          -(2**63), 1e308, float("nan"), 1.5, "", "[/]", "\x1b[2J", b"\x00\xffblob",
          "9" * 40, '{"range": 5}', '[[1, 2]]', "running", "ttrecord-session"]  # fmt: skip
READERS = {
    "report": lambda s, d: ["report", s],
    "check": lambda s, d: ["check", s],
    "check-json": lambda s, d: ["check", s, "--format", "json"],
    "check-sarif": lambda s, d: ["check", s, "--format", "sarif"],
    "sessions": lambda s, d: ["sessions", d],
    "diff": lambda s, d: ["diff", s, s],
    "export": lambda s, d: ["export", "perfetto", s, "-o", f"{d}/out.json", "-f"],
}


@pytest.fixture(scope="module")
def originals(tmp_path_factory):
    folder = tmp_path_factory.mktemp("originals")
    cwd = os.getcwd()
    os.chdir(folder)
    try:
        return [build_alloc_after_capture(folder), build_hostile(folder)]
    finally:
        os.chdir(cwd)


def mutate(path: Path, rng: random.Random, count: int) -> list[str]:
    """Set `count` random cells of `path` to random bad values; returns what was done."""
    conn = sqlite3.connect(path)
    done = []
    try:
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        for _ in range(count):
            table = rng.choice(tables)
            columns = [r[1] for r in conn.execute(f"PRAGMA table_info({table})")]
            rowids = [r[0] for r in conn.execute(f"SELECT rowid FROM [{table}]")]
            if not rowids:
                continue
            column, rowid, value = rng.choice(columns), rng.choice(rowids), rng.choice(VALUES)
            try:
                with conn:
                    conn.execute(f"UPDATE [{table}] SET [{column}] = ? WHERE rowid = ?",
                                 (value, rowid))  # fmt: skip
            except sqlite3.Error:
                continue  # a constraint refused it
            done.append(f"{table}.{column}[{rowid}] = {value!r:.30}")
    finally:
        conn.close()
    return done


@pytest.mark.parametrize("seed", range(CASES))
def test_readers_survive_damaged_cells(tmp_path, originals, capsys, seed):
    """GIVEN a real session with 1-3 cells set to bad values (seeded) WHEN every reader runs
    THEN each exits 0, 1 or 2 (check: 3 for a run that did not finish) with no traceback, and a failure is one line on stderr."""
    rng = random.Random(seed)
    source = originals[seed % len(originals)]
    target = tmp_path / "s.db"
    shutil.copy(source, target)
    done = mutate(target, rng, rng.randint(1, 3))
    for name, args in READERS.items():
        code = main(args(str(target), str(tmp_path)))
        out, err = capsys.readouterr()
        # check exits 3 for a run that did not finish (the hostile session's program failed)
        assert code in ((0, 1, 2, 3) if name.startswith("check") else (0, 1, 2)), (name, done, err)
        assert "Traceback" not in err, (name, done, err)
        if code == 2 and name == "sessions":  # the bad file is marked in the listing
            assert "damaged" in out, (done, out)
        elif code == 2:
            assert len(err.strip().splitlines()) == 1, (name, done, err)
