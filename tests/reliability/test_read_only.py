"""Finished sessions are single, self-contained files that read from places the reader cannot
write (issue problem 5: files stayed in WAL mode and read-only folders said "damaged")."""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import uuid
from pathlib import Path

import pytest

from tests.reliability.conftest import PROLOGUE, run_cli

pytestmark = pytest.mark.spawns

QUICK = PROLOGUE + "ttnn.relu(ttnn.Tensor(device))\n"


def _record(tmp_path, script) -> Path:
    out = tmp_path / "s.db"
    proc = run_cli(tmp_path, "run", "--backend", "ttnn", "-o", str(out), str(script(QUICK)))
    assert proc.returncode == 0, proc.stderr
    return out


def test_finished_session_is_one_file_in_delete_mode(tmp_path, script):
    """GIVEN a finished run WHEN looking beside the session THEN no -wal/-shm/log files, the
    journal mode is DELETE, and reading it creates no file beside it."""
    out = _record(tmp_path, script)
    assert sorted(p.name for p in tmp_path.glob("s.db*")) == ["s.db"]
    conn = sqlite3.connect(out)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
    conn.close()
    for command in (["report", str(out)], ["check", "--allow-empty", str(out)],
                    ["export", "perfetto", str(out), "-o", str(tmp_path / "t.json")]):  # fmt: skip
        done = run_cli(tmp_path, *command)
        assert done.returncode == 0, done.stderr
        assert sorted(p.name for p in tmp_path.glob("s.db*")) == ["s.db"], command


@pytest.fixture
def read_only_place(tmp_path):
    """A read-only mount (root) or a folder without write permission (other users)."""
    if os.geteuid() != 0:
        folder = tmp_path / "ro"
        folder.mkdir()
        yield folder, lambda: folder.chmod(0o555)
        folder.chmod(0o755)
        return
    mnt = Path("/tmp") / f"ttrecord-ro-{uuid.uuid4().hex[:8]}"
    mnt.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", str(mnt)],
                      capture_output=True).returncode != 0:  # fmt: skip
        mnt.rmdir()
        pytest.skip("cannot make a read-only place here")

    def seal() -> None:
        subprocess.run(["mount", "-o", "remount,ro", str(mnt)], check=True)

    try:
        yield mnt, seal
    finally:
        subprocess.run(["umount", str(mnt)], capture_output=True)
        shutil.rmtree(mnt, ignore_errors=True)


@pytest.mark.parametrize("wal", [False, True], ids=["finished", "left-in-wal-mode"])
def test_session_reads_from_a_read_only_place(tmp_path, script, read_only_place, wal):
    """GIVEN a session in a place the reader cannot write (also one an older ttrecord left in
    WAL mode) WHEN report and check read it THEN they work; check says the findings were not
    stored instead of failing."""
    out = _record(tmp_path, script)
    if wal:
        conn = sqlite3.connect(out)
        conn.execute("PRAGMA journal_mode = WAL")
        conn.close()
    place, seal = read_only_place
    target = place / "s.db"
    shutil.copy(out, target)
    seal()
    report = run_cli(tmp_path, "report", str(target))
    assert report.returncode == 0, report.stderr
    assert "damaged" not in report.stderr and "status OK" in report.stdout
    check = run_cli(tmp_path, "check", "--allow-empty", str(target))
    assert check.returncode == 0, check.stderr
    assert "Traceback" not in check.stderr
    for fmt, name in (("perfetto", "t.json"), ("visualizer", "vis")):  # output there: refused
        export = run_cli(tmp_path, "export", fmt, str(out), "-o", str(place / name))
        assert export.returncode == 2, export.stderr
        assert "Traceback" not in export.stderr and len(export.stderr.strip().splitlines()) == 1
