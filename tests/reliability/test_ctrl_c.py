"""Ctrl-C reaches the program once (issue problem 4: the forwarded SIGINT counted as a second
Ctrl-C and the child was SIGKILLed a second later, cutting its cleanup short)."""

from __future__ import annotations

import fcntl
import os
import select
import signal
import subprocess
import termios
import time

from tests.reliability.conftest import (PROLOGUE, fake_env, kill_quietly, session_row,
                                        start_run, ttrecord_cmd)  # fmt: skip
import pytest

pytestmark = pytest.mark.spawns

SLOW_CLEANUP = PROLOGUE + """\
import os, time
print("pid", os.getpid(), flush=True)
try:
    while True:
        ttnn.relu(ttnn.Tensor(device))
        time.sleep(0.01)
except KeyboardInterrupt:
    print("interrupted once", flush=True)
    time.sleep(2.5)  # a close_device on a card takes this long
    ttnn.relu(ttnn.Tensor(device))
    print("cleanup done", flush=True)
    raise
"""


def _read_until(fd: int, needle: bytes, timeout: float = 30) -> bytes:
    data = b""
    deadline = time.monotonic() + timeout
    while needle not in data and time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.1)
        if ready:
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                break
            if not chunk:
                break
            data += chunk
    return data


def test_terminal_ctrl_c_lets_a_slow_cleanup_finish(tmp_path, script):
    """GIVEN a program whose KeyboardInterrupt cleanup takes 2.5 s, run in a real terminal
    (pty) WHEN the user presses Ctrl-C once THEN the program sees one KeyboardInterrupt, its
    cleanup (with a ttnn call) finishes, ttrecord exits 130 and the session is interrupted."""
    out = tmp_path / "s.db"
    master, slave = os.openpty()

    def controlling_tty() -> None:
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)

    proc = subprocess.Popen(ttrecord_cmd("run", "--backend", "ttnn", "-o", str(out),
                                         str(script(SLOW_CLEANUP))),
                            cwd=tmp_path, env=fake_env(tmp_path), stdin=slave, stdout=slave,
                            stderr=slave, start_new_session=True,
                            preexec_fn=controlling_tty)  # fmt: skip
    os.close(slave)
    try:
        seen = _read_until(master, b"pid ")
        assert b"pid " in seen, seen
        time.sleep(0.3)
        os.write(master, b"\x03")  # Ctrl-C: the terminal signals the foreground group
        rest = _read_until(master, b"ttrecord check", timeout=30)
        proc.wait(10)
    finally:
        kill_quietly(proc.pid)
        os.close(master)
    text = (seen + rest).decode(errors="replace")
    assert text.count("interrupted once") == 1, text
    assert "cleanup done" in text, text
    assert proc.returncode == 130, text
    row = session_row(out)
    assert (row["status"], row["exit_code"]) == ("interrupted", 130)


def test_sigint_to_the_supervisor_alone_is_forwarded_once(tmp_path, script):
    """GIVEN the same program WHEN SIGINT is sent to `ttrecord run` only (kill -INT) THEN it is
    forwarded once: one KeyboardInterrupt, cleanup done, exit 130 (not a SIGKILL's 137)."""
    out = tmp_path / "s.db"
    proc = start_run(tmp_path, script(SLOW_CLEANUP), out)
    line = proc.stdout.readline()
    child = int(line.split()[1])
    try:
        time.sleep(0.3)
        os.kill(proc.pid, signal.SIGINT)
        stdout, err = proc.communicate(timeout=30)
    finally:
        kill_quietly(child)
    assert proc.returncode == 130, err
    assert stdout.count("interrupted once") == 1 and "cleanup done" in stdout, stdout
    assert session_row(out)["status"] == "interrupted"


def test_second_ctrl_c_escalates(tmp_path, script):
    """GIVEN a program that ignores KeyboardInterrupt WHEN the supervisor gets SIGINT twice
    THEN the program is killed and the session is closed as interrupted."""
    prog = PROLOGUE + """\
import os, signal, time
signal.signal(signal.SIGINT, signal.SIG_IGN)
print(os.getpid(), flush=True)
while True:
    time.sleep(0.05)
"""
    out = tmp_path / "s.db"
    proc = start_run(tmp_path, script(prog), out)
    child = int(proc.stdout.readline())
    try:
        os.kill(proc.pid, signal.SIGINT)
        time.sleep(0.5)
        assert proc.poll() is None  # one Ctrl-C the program ignores: it runs on
        os.kill(proc.pid, signal.SIGINT)
        _, err = proc.communicate(timeout=20)
    finally:
        kill_quietly(child)
    assert proc.returncode == 130, err
    assert session_row(out)["status"] == "interrupted"
