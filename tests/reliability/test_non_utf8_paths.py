"""Paths are bytes: a program whose files have names that are not UTF-8 runs and is recorded
as under plain python (issue 36, failure 2: the supervisor failed on the first such call site,
killed the program, replaced its exit code with 125 and deleted the log; a non-UTF-8 script name
never ran)."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

from tests.reliability.conftest import events, fake_env, session_row
import pytest

pytestmark = pytest.mark.spawns

MODULE = b"""\
import ttnn

def work(device):
    t = ttnn.Tensor(device)
    for _ in range(5):
        t = ttnn.relu(t)
    return t
"""

MAIN = b"""\
import sys
sys.path.insert(0, sys.argv[1])
import ttnn
import helper
device = ttnn.open_device(device_id=0)
helper.work(device)
print("program finished", flush=True)
sys.exit(3)
"""


def _run(folder: Path, *args: bytes) -> subprocess.CompletedProcess:
    cmd = [os.fsencode(sys.executable), b"-m", b"ttrecord", b"run", b"--backend", b"ttnn",
           b"-o", os.fsencode(folder / "s.db"), *args]  # fmt: skip
    return subprocess.run(cmd, cwd=folder, env=fake_env(folder), capture_output=True,
                          timeout=120)  # fmt: skip


def _recorded(folder: Path, proc: subprocess.CompletedProcess) -> None:
    stderr = proc.stderr.decode("utf-8", "replace")
    assert proc.returncode == 3, stderr[-2000:]
    assert b"program finished" in proc.stdout
    assert "Traceback" not in stderr
    row = session_row(folder / "s.db")
    assert row["status"] == "ok" and row["exit_code"] == 3
    relus = events(folder / "s.db", "name = 'relu'")
    assert len(relus) == 5


def test_module_in_a_non_utf8_folder_is_recorded(tmp_path):
    """GIVEN a module in a folder whose name is not UTF-8 WHEN it calls ttnn under `run` THEN
    the program runs to its end with its own exit code and every call is in the session."""
    folder = os.path.join(os.fsencode(tmp_path), b"caf\xe9-\xff")
    os.mkdir(folder)
    with open(os.path.join(folder, b"helper.py"), "wb") as fh:
        fh.write(MODULE)
    main = tmp_path / "main.py"
    main.write_bytes(MAIN)
    proc = _run(tmp_path, os.fsencode(main), folder)
    _recorded(tmp_path, proc)
    conn = sqlite3.connect(f"file:{tmp_path / 's.db'}?mode=ro", uri=True)
    files = conn.execute("SELECT c.file FROM events e JOIN callsites c ON c.id = e.callsite"
                         " WHERE e.name = 'relu'").fetchall()  # fmt: skip
    conn.close()
    assert len(files) == 5 and all(f.endswith("caf\\xe9-\\xff/helper.py") for (f,) in files), files


def test_non_utf8_script_name_runs(tmp_path):
    """GIVEN a script whose own name is not UTF-8 WHEN it is run under ttrecord THEN it runs,
    keeps its exit code, and is recorded."""
    (tmp_path / "helper.py").write_bytes(MODULE)
    main = os.path.join(os.fsencode(tmp_path), b"prog-\xe9\xff.py")
    with open(main, "wb") as fh:
        fh.write(MAIN)
    proc = _run(tmp_path, main, os.fsencode(tmp_path))
    _recorded(tmp_path, proc)


# Makes the supervisor's second batch fail with an error ttrecord does not expect, on either
# pipeline (SessionWriter.add on the Python one, NativePipeline.write_ready on the C one).
_FAULT = """\
import os
if os.environ.get("TTRECORD_TEST_WRITER_FAULT"):
    import ttrecord.recorder.pipeline as p
    import ttrecord.store.writer as w
    _calls = [0]
    def faulty(write):
        def batch(self, *args):
            _calls[0] += 1
            if _calls[0] == 2:
                raise RuntimeError("injected writer fault")
            return write(self, *args)
        return batch
    w.SessionWriter.add = faulty(w.SessionWriter.add)
    p.NativePipeline.write_ready = faulty(p.NativePipeline.write_ready)
"""

_SLOW = b"""\
import sys, time
import ttnn
device = ttnn.open_device(device_id=0)
t = ttnn.Tensor(device)
for _ in range(20):
    t = ttnn.relu(t)
    time.sleep(0.03)
print("program finished", flush=True)
sys.exit(3)
"""


@pytest.mark.parametrize("pipeline", ["c", "python"])
def test_supervisor_failure_leaves_the_program_alone(tmp_path, pipeline):
    """GIVEN a supervisor that fails with an unexpected error while the program runs (on the C
    pipeline, where it is available, and on the Python one) WHEN the program goes on THEN it
    runs to its end with its own exit code, the log is kept and the session says why it is
    partial."""
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    (hooks / "sitecustomize.py").write_text(_FAULT)
    main = tmp_path / "main.py"
    main.write_bytes(_SLOW)
    env = fake_env(tmp_path)
    env["PYTHONPATH"] = os.pathsep.join([str(hooks), env["PYTHONPATH"]])
    env["TTRECORD_TEST_WRITER_FAULT"] = "1"
    if pipeline == "python":
        env["TTRECORD_PYTHON_PIPELINE"] = "1"
    proc = subprocess.run([sys.executable, "-m", "ttrecord", "run", "--backend", "ttnn", "-o",
                           str(tmp_path / "s.db"), str(main)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert proc.returncode == 3, proc.stderr[-2000:]
    assert "program finished" in proc.stdout
    assert "injected writer fault" in proc.stderr and "Traceback" not in proc.stderr
    assert (tmp_path / "s.db.log").exists()
    row = session_row(tmp_path / "s.db")
    assert row["exit_code"] == 3 and row["status"] == "ok"
    assert "event log is kept" in row["options"]
