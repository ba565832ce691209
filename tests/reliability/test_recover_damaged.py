"""`recover` never leaves a session holding less than it did (issue 36, failure 3: with a
damaged log it rebuilt the session from the log alone and replaced it, silently cutting a
session to a fraction of its events; a 25-byte crafted log cost 2 GB of memory)."""

from __future__ import annotations

import os
import random
import shutil
import sqlite3
import struct
import subprocess
from pathlib import Path

import pytest

from tests.reliability.conftest import PROLOGUE, fake_env, ttrecord_cmd

pytestmark = pytest.mark.spawns

PROGRAM = PROLOGUE + """\
t = ttnn.Tensor(device)
for i in range(300):
    t = ttnn.relu(t)
    ttnn.echo(note="n" * (i % 50))
"""


def _count(db: Path) -> int:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return conn.execute("SELECT count(*) FROM events").fetchone()[0]
    finally:
        conn.close()


@pytest.fixture(scope="module")
def recorded(tmp_path_factory) -> tuple[Path, Path, int]:
    """A session left `running` (as by a killed supervisor) with its complete log beside it."""
    folder = tmp_path_factory.mktemp("recorded")
    prog = folder / "prog.py"
    prog.write_text(PROGRAM)
    out = folder / "s.db"
    env = {**fake_env(folder), "TTRECORD_KEEP_LOG": "1"}
    proc = subprocess.run(ttrecord_cmd("run", "--backend", "ttnn", "-o", str(out), str(prog)),
                          cwd=folder, env=env, capture_output=True, text=True, timeout=120)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    conn = sqlite3.connect(out, isolation_level=None)
    conn.execute("UPDATE session SET status = 'running', ended_at = NULL")
    conn.close()
    return out, Path(str(out) + ".log"), _count(out)


def _damages(log: bytes) -> list[tuple[str, bytes]]:
    rng = random.Random(36)
    (committed,) = struct.unpack_from("<Q", log)
    log = log[:committed]  # the room the writer reserved past its records holds nothing
    cases = []
    for frac in (0.1, 0.3, 0.5, 0.7, 0.9, 0.99):
        cases.append((f"truncated at {frac}", log[: int(len(log) * frac)]))
    for i in range(12):
        data = bytearray(log)
        for _ in range(1 + i % 3):
            at = rng.randrange(16, len(data))
            data[at] ^= 1 << rng.randrange(8)
        cases.append((f"bit flips {i}", bytes(data)))
    for i in range(6):
        data = bytearray(log)
        at = 16
        for _ in range(rng.randrange(1, 40)):  # walk to a frame boundary
            (size,) = struct.unpack_from("<I", data, at)
            at += 4 + size
        struct.pack_into("<I", data, at, rng.choice([0xFFFFFFFF, 1 << 30, 0, 3, 1 << 20]))
        cases.append((f"crafted frame size {i}", bytes(data)))
    head = bytearray(log)
    struct.pack_into("<Q", head, 0, 1 << 62)
    cases.append(("committed offset past the file", bytes(head)))
    cases.append(("zeroed middle", log[:2000] + bytes(4000) + log[6000:]))
    cases.append(("header only", log[:16]))
    cases.append(("empty", b""))
    cases.append(("not a log", b"hello world, not a log at all" * 10))
    cases.append(("garbage appended", log + bytes(range(256)) * 4))
    return cases


def test_damaged_logs_never_shrink_the_session(recorded, tmp_path):
    """GIVEN a session with its log WHEN 30 differently damaged copies of the log are
    recovered THEN no recovered session holds fewer events than before, each exits 0 (or 2) with
    ttrecord's own message, never a traceback, and dropped data is reported."""
    session, log, before = recorded
    raw = log.read_bytes()
    cases = _damages(raw)
    assert len(cases) == 30
    for i, (name, data) in enumerate(cases):
        folder = tmp_path / f"c{i}"
        folder.mkdir()
        shutil.copy(session, folder / "s.db")
        (folder / "s.db.log").write_bytes(data)
        proc = subprocess.run(ttrecord_cmd("recover", str(folder / "s.db")), cwd=folder,
                              env=fake_env(folder), capture_output=True, text=True,
                              timeout=120)  # fmt: skip
        assert "Traceback" not in proc.stderr, (name, proc.stderr)
        assert proc.returncode in (0, 2), (name, proc.stderr)
        assert proc.stderr.startswith("ttrecord"), (name, proc.stderr)
        after = _count(folder / "s.db")
        assert after >= before, (name, after, before, proc.stderr)
        if name.startswith(("truncated", "crafted", "zeroed", "committed")):  # detectable
            assert "unreadable" in proc.stderr or "kept" in proc.stderr, (name, proc.stderr)


def test_crafted_25_byte_log_stays_bounded(recorded, tmp_path):
    """GIVEN a 25-byte log whose one record claims a list of 2**28 items WHEN recovered THEN
    memory stays bounded and the session keeps every event."""
    session, _, before = recorded
    shutil.copy(session, tmp_path / "s.db")
    body = b"[" + struct.pack("<I", 1 << 28)  # marshal: a list of 2**28 items (none follow)
    frame = struct.pack("<I", len(body)) + body
    header = struct.pack("<Q", 16 + len(frame)) + b"TTRLOG01"
    (tmp_path / "s.db.log").write_bytes(header + frame)
    assert len(header + frame) == 25
    proc = subprocess.Popen(ttrecord_cmd("recover", str(tmp_path / "s.db")), cwd=tmp_path,
                            env=fake_env(tmp_path), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)  # fmt: skip
    _, status, usage = os.wait4(proc.pid, 0)
    stderr = proc.stderr.read() if proc.stderr else ""
    proc.returncode = os.waitstatus_to_exitcode(status)
    assert "Traceback" not in stderr, stderr
    assert usage.ru_maxrss < 400 * 1024, usage.ru_maxrss  # KiB
    assert _count(tmp_path / "s.db") >= before


def test_recover_waits_for_a_program_that_outlived_its_supervisor(tmp_path):
    """GIVEN a program that ignores SIGTERM WHEN its `ttrecord run` is SIGKILLed THEN the
    program runs on, and `recover` refuses to finish the session until it ended (issue 36,
    failure 11: the session was finished while the program still appended to the log)."""
    import signal
    import time

    from tests.reliability.conftest import kill_quietly, start_run, wait_dead

    prog = tmp_path / "prog.py"
    prog.write_text(PROLOGUE + """\
import os, signal, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
print(os.getpid(), flush=True)
t = ttnn.Tensor(device)
for i in range(6000):
    t = ttnn.relu(t)
    time.sleep(0.01)
""")
    out = tmp_path / "s.db"
    proc = start_run(tmp_path, prog, out)
    assert proc.stdout is not None
    child = int(proc.stdout.readline())
    try:
        time.sleep(0.5)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
        time.sleep(0.3)
        early = subprocess.run(ttrecord_cmd("recover", str(out)), cwd=tmp_path,
                               env=fake_env(tmp_path), capture_output=True, text=True,
                               timeout=60)  # fmt: skip
        assert early.returncode == 2 and "still running" in early.stderr, early.stderr
    finally:
        kill_quietly(child)
    assert wait_dead(child)
    done = subprocess.run(ttrecord_cmd("recover", str(out)), cwd=tmp_path, env=fake_env(tmp_path),
                          capture_output=True, text=True, timeout=60)  # fmt: skip
    assert done.returncode == 0, done.stderr
