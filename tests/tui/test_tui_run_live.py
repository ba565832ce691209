"""`ttrecord run --tui` opens the UI at the program's start, on a real terminal (a pty).

GIVEN a program that waits at gates the test opens, then crashes in a replay
WHEN `ttrecord run --tui` runs it in a pseudo-terminal
THEN the UI is on the terminal while the program is still running, the program's own output
goes to SESSION.db.out instead, the UI shows the crash when it happens, and quitting the UI
ends the run with the program's exit status and the usual summary.
"""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import struct
import sys
import termios
import time
from pathlib import Path

from test_tui_live_follow import PROGRAM
import pytest

pytestmark = pytest.mark.spawns

_ANSI = re.compile(r"\x1b\[[0-9;?<>=]*[ -/]*[@-~]|\x1b[P\]X^_].*?(\x1b\\|\x07)|\x1b.", re.S)


class Terminal:
    def __init__(self, fd: int) -> None:
        self.fd, self.raw = fd, b""

    def text(self) -> str:
        return _ANSI.sub("", self.raw.decode("utf-8", "replace"))

    def wait_for(self, needle: str, timeout: float = 90.0) -> None:
        deadline = time.monotonic() + timeout
        while needle not in self.text():
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"{needle!r} never appeared; the terminal showed:\n{self.text()[-3000:]}")
            ready, _, _ = select.select([self.fd], [], [], min(left, 0.2))
            if ready:
                try:
                    self.raw += os.read(self.fd, 65536)
                except OSError:  # the process closed the terminal
                    raise AssertionError(f"{needle!r} never appeared:\n{self.text()[-3000:]}") from None


def test_run_tui_follows_the_program_from_its_start_to_its_crash(tmp_path):
    (tmp_path / "program.py").write_text(PROGRAM)
    gate = tmp_path / "gate"
    pid, fd = pty.fork()
    if pid == 0:  # the child: ttrecord run on the pty
        os.chdir(tmp_path)
        os.environ["TERM"] = "xterm-256color"
        os.execv(sys.executable, [sys.executable, "-m", "ttrecord.cli.main", "run", "--tui",
                                  "--backend", "emulator", "-o", "live.db", "program.py", str(gate)])  # fmt: skip
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    term = Terminal(fd)
    try:
        term.wait_for("Following the recording live")  # the UI, while the program waits
        assert "running" in term.text()
        Path(f"{gate}.1").touch()
        Path(f"{gate}.2").touch()
        term.wait_for("crashed")
        time.sleep(0.5)
        os.write(fd, b"q")
        term.wait_for("ttrecord: session live.db (crashed")  # the summary, after the UI quit
        _, status = os.waitpid(pid, 0)
        pid = 0
        assert os.waitstatus_to_exitcode(status) == 128 + 11  # the program died of SIGSEGV
        out = (tmp_path / "live.db.out").read_text()
        assert "ttrecord: backend emulator" in out  # the run's own chatter went there
        assert "the program's stderr" in out  # and so did the program's stderr
        assert "the program's stderr" not in term.text()
    finally:
        if pid:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
        os.close(fd)
