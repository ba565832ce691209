"""A full disk stops the recording, never the program (issue problem 2: the log was a sparse
mapping, so the program died of SIGBUS and the supervisor of `database or disk is full`)."""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import uuid
from pathlib import Path

import pytest

from tests.reliability.conftest import PROLOGUE, fake_env, session_row, ttrecord_cmd

pytestmark = pytest.mark.spawns

# Big arguments make every call's records large, so the log outgrows the space quickly.
BUSY = PROLOGUE + """\
import sys
t = ttnn.Tensor(device)
for i in range(3000):
    t = ttnn.relu(t)
    ttnn.echo(note="x" * 4000 + str(i))
print("program finished", flush=True)
sys.exit(7)
"""


def _check_outcome(proc: subprocess.CompletedProcess, out: Path) -> None:
    assert proc.returncode == 7, proc.stderr[-2000:]
    assert "program finished" in proc.stdout
    assert "Traceback" not in proc.stderr and "Bus error" not in proc.stderr
    assert "recording stopped" in proc.stderr
    row = session_row(out)
    assert row["status"] == "ok" and row["exit_code"] == 7
    assert "recording_stopped" in json.loads(row["options"])
    assert proc.stderr.count("recording stopped") <= 2  # once per side (program, session)


def test_file_size_limit_stops_recording_not_the_program(tmp_path, script):
    """GIVEN a file-size limit (RLIMIT_FSIZE: writes past it fail as on a full disk) WHEN a
    busy program is recorded THEN it runs to the end with its exit code, and the session says
    recording stopped."""
    prog = script(BUSY)
    out = tmp_path / "s.db"

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (3 << 20, 3 << 20))

    proc = subprocess.run(ttrecord_cmd("run", "--backend", "ttnn", "-o", str(out), str(prog)),
                          cwd=tmp_path, env=fake_env(tmp_path), capture_output=True, text=True,
                          timeout=120, preexec_fn=limit)  # fmt: skip
    _check_outcome(proc, out)


@pytest.fixture
def small_disk(tmp_path):
    """A 4 MB tmpfs: a real full disk (needs mount rights; skipped without them)."""
    mnt = Path("/tmp") / f"ttrecord-full-{uuid.uuid4().hex[:8]}"
    mnt.mkdir()
    made = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(mnt)],
                          capture_output=True)  # fmt: skip
    if made.returncode != 0:
        mnt.rmdir()
        pytest.skip("cannot mount a small file system here")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", str(mnt)], capture_output=True)
        shutil.rmtree(mnt, ignore_errors=True)


def test_full_disk_stops_recording_not_the_program(tmp_path, script, small_disk):
    """GIVEN a session on a 4 MB file system WHEN a busy program fills it THEN no SIGBUS: the
    program runs to the end with its exit code, the session is final and says why it is
    partial."""
    prog = script(BUSY)
    out = small_disk / "s.db"
    proc = subprocess.run(ttrecord_cmd("run", "--backend", "ttnn", "-o", str(out), str(prog)),
                          cwd=tmp_path, env=fake_env(tmp_path), capture_output=True, text=True,
                          timeout=120)  # fmt: skip
    _check_outcome(proc, out)
    assert not os.path.exists(str(out) + ".log")
    report = subprocess.run(ttrecord_cmd("report", str(out)), cwd=tmp_path, env=fake_env(tmp_path),
                            capture_output=True, text=True, timeout=60)  # fmt: skip
    assert "partial recording: the event log cannot grow" in " ".join(report.stdout.split())
