"""The event log is a shared mapping of its file: records a writer committed survive the
writer being killed outright, and the room the file was grown by is never read as records."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

from tests.recorder.conftest import REPO

from ttrecord.recorder.log import LogReader
import pytest

pytestmark = pytest.mark.spawns

WRITER = """\
import os, signal, sys
from ttrecord.recorder.log import LogWriter
log = LogWriter(sys.argv[1])
for i in range(20000):  # about 1.3 MB: the mapping grows past its first size once
    log.defer(("E", i))
    log.write(("B", i, "x" * 50))
log.defer(("P", -1))  # queued, never written: lost with the process, as documented
os.kill(os.getpid(), signal.SIGKILL)
"""


def test_committed_records_survive_sigkill(tmp_path):
    """GIVEN a writer that writes 20,000 calls and is then SIGKILLed (no close, no flush)
    WHEN the log is read THEN every written record is there, in order, the queued one is not,
    and nothing is read from the unused room at the end of the file."""
    path = tmp_path / "events.log"
    proc = subprocess.run([sys.executable, "-c", WRITER, str(path)], env={**os.environ,
                          "PYTHONPATH": str(REPO)}, capture_output=True, text=True)  # fmt: skip
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    reader = LogReader(str(path))
    got = list(reader.read())
    while reader.more:
        got += list(reader.read())
    reader.close()
    expected = []
    for i in range(20000):
        expected += [("E", i), ("B", i, "x" * 50)]
    assert got == expected
    assert reader.truncated_bytes == 0
    assert os.path.getsize(path) == 2 << 20  # grown once by doubling; the end is zeroed room
