"""The recorder owns its descriptors: a program that closes every fd above 2 and opens its own
files must never have the recorder write into them (issue 36, failure 1: the log writer kept fd
numbers the program had reused, and growing the log turned the program's files into NUL bytes
and killed it with SIGBUS)."""

from __future__ import annotations

import hashlib
import subprocess

from tests.reliability.conftest import PROLOGUE, fake_env, session_row, ttrecord_cmd
import pytest

pytestmark = pytest.mark.spawns

# Closes every fd above 2 (the recorder's too), opens eight files of its own (they get the
# lowest numbers, the ones the recorder had), then makes the log outgrow its first megabyte.
CLOSER = PROLOGUE + """\
import os, resource, sys
os.closerange(3, resource.getrlimit(resource.RLIMIT_NOFILE)[0])
files = []
for i in range(8):
    f = open(f"mine{i}.txt", "w+b")
    f.write(b"program data %d\\n" % i * 100)
    f.flush()
    files.append(f)
t = ttnn.Tensor(device)
for i in range(800):
    t = ttnn.relu(t)
    ttnn.echo(note="x" * 4000 + str(i))
for f in files:
    f.flush()
print("program finished", flush=True)
sys.exit(7)
"""


def test_program_that_reuses_fds_keeps_its_files_and_exit_code(tmp_path, script):
    """GIVEN a program that closes all fds above 2 and opens its own files WHEN the log must
    grow THEN its files are untouched (checksums), it exits with its own code, and the session
    says why recording stopped."""
    prog = script(CLOSER)
    out = tmp_path / "s.db"
    proc = subprocess.run(ttrecord_cmd("run", "--backend", "ttnn", "-o", str(out), str(prog)),
                          cwd=tmp_path, env=fake_env(tmp_path), capture_output=True, text=True,
                          timeout=120)  # fmt: skip
    assert proc.returncode == 7, proc.stderr[-2000:]
    assert "program finished" in proc.stdout
    for i in range(8):
        data = (tmp_path / f"mine{i}.txt").read_bytes()
        expected = b"program data %d\n" % i * 100
        assert hashlib.sha256(data).hexdigest() == hashlib.sha256(expected).hexdigest(), i
    assert "recording stopped" in proc.stderr
    row = session_row(out)
    assert row["exit_code"] == 7
    assert "descriptor" in (row["options"] or "")
