"""`ttrecord run --tui`: the UI follows the session from the program's start.

The UI needs the terminal, and the recorded program would write over it. So for the length of
the run the program's stdout and stderr go to SESSION.db.out and its stdin is empty, the UI
runs as `ttrecord tui SESSION.db` in a child process on the saved terminal as soon as the
session can be read, and the supervisor records in this process as usual. When the program
ends the UI says so (it follows the status); quitting the UI then ends `ttrecord run`, which
restores the terminal and prints its usual summary.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

_OPEN_TIMEOUT_S = 120.0  # loading torch and a backend can take a while on a busy machine


def _readable(path: Path) -> bool:
    from ttrecord.errors import SessionError
    from ttrecord.store.reader import Session

    try:
        Session.open(path, snapshot=False).close()
        return True
    except SessionError:
        return False


@contextmanager
def ui_alongside(session: Path) -> Iterator[Path]:
    """Run the body (the recording) with the UI open on `session`; yields where the program's
    output goes."""
    out = session.with_name(session.name + ".out")
    print(f"ttrecord: the program's output goes to {out}", file=sys.stderr)
    sys.stdout.flush()
    sys.stderr.flush()
    terminal = [os.dup(fd) for fd in (0, 1, 2)]
    log = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    empty = os.open(os.devnull, os.O_RDONLY)
    os.dup2(empty, 0)  # keys are the UI's, not the program's
    os.dup2(log, 1)
    os.dup2(log, 2)
    os.close(log)
    os.close(empty)
    done = threading.Event()
    ui: list[subprocess.Popen] = []

    def launch() -> None:
        deadline = time.monotonic() + _OPEN_TIMEOUT_S
        while not (session.exists() and _readable(session)):
            if done.is_set() or time.monotonic() > deadline:
                return
            time.sleep(0.05)
        ui.append(subprocess.Popen(
            [sys.executable, "-m", "ttrecord.cli.main", "tui", str(session)],
            stdin=terminal[0], stdout=terminal[1], stderr=terminal[2],
        ))  # fmt: skip

    starter = threading.Thread(target=launch, name="ttrecord-ui", daemon=True)
    starter.start()
    try:
        yield out
    finally:
        done.set()
        starter.join()
        for proc in ui:
            proc.wait()  # the user looks at the finished run, then quits
        sys.stdout.flush()
        sys.stderr.flush()
        for fd, saved in enumerate(terminal):
            os.dup2(saved, fd)
            os.close(saved)
