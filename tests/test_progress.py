"""Progress bars: on a terminal's stderr while check, report, export and diff work; nothing but
the command's output when stderr is piped, or with --quiet."""

import os
import pty
import subprocess
import sys

import pytest

from ttrecord.testing import SessionBuilder

pytestmark = pytest.mark.spawns


@pytest.fixture
def session(tmp_path):
    b = SessionBuilder(file="/models/decoder.py")
    b.open_device(line=1)
    x = b.alloc(0x100000)
    tid = b.begin_trace(line=2)
    b.op("ttnn.add", [x], [x], line=3)
    b.end_trace(tid, line=4)
    b.execute(tid, line=5)
    b.release(tid, line=6)
    return b.write(tmp_path / "s.db")


def _run(argv, tty_stderr: bool, cwd):
    """Run `ttrecord argv` with stdout piped and stderr on a pseudo-terminal (or piped), the
    bar shown at once (TTRECORD_PROGRESS_DELAY=0); returns (stdout, stderr, exit code)."""
    env = {**os.environ, "TTRECORD_PROGRESS_DELAY": "0", "TERM": "xterm", "COLUMNS": "100"}
    cmd = [sys.executable, "-m", "ttrecord", *argv]
    if not tty_stderr:
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=cwd, timeout=120)
        return proc.stdout, proc.stderr, proc.returncode
    master, slave = pty.openpty()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=slave, env=env, cwd=cwd)
    os.close(slave)
    err = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        err += chunk
    out = proc.stdout.read().decode()
    code = proc.wait(timeout=120)
    os.close(master)
    return out, err.decode(errors="replace"), code


COMMANDS = {
    "check": (["check", "{s}"], "checking"),
    "report": (["report", "{s}"], "reading the session"),
    "export": (["export", "perfetto", "{s}", "-o", "{tmp}/t.json", "-f"], "exporting perfetto"),
    "diff": (["diff", "{s}", "{s}"], "diff "),
}


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_bar_shows_on_a_terminal_and_nothing_else_when_piped(command, session, tmp_path):
    argv, label = COMMANDS[command]
    argv = [a.format(s=session, tmp=tmp_path) for a in argv]
    # GIVEN stderr on a terminal WHEN the command runs THEN its bar is drawn there
    out_tty, err_tty, code_tty = _run(argv, tty_stderr=True, cwd=tmp_path)
    assert label in err_tty
    assert "\x1b[" in err_tty  # drawn with terminal control sequences, then removed
    # GIVEN stderr piped WHEN it runs again THEN stderr is empty and stdout is the same output
    out_pipe, err_pipe, code_pipe = _run(argv, tty_stderr=False, cwd=tmp_path)
    assert err_pipe == ""
    assert code_pipe == code_tty
    assert out_pipe.replace(str(tmp_path), "") == out_tty.replace(str(tmp_path), "")
    assert out_pipe.strip()  # the command's own output is there
    # GIVEN a terminal and --quiet WHEN it runs THEN nothing is drawn
    _, err_quiet, _ = _run([*argv, "--quiet"], tty_stderr=True, cwd=tmp_path)
    assert label not in err_quiet and err_quiet.strip() == ""
