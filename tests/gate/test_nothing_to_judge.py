"""Rule: a run that gives the trace rules nothing to judge never passes as clean. `check`
exits 4 with one sentence saying why (no backend, no ttnn call, no capture) unless
--allow-empty; a backend that cannot load is ttrecord's own failure (exit 125, one line, the
session kept and marked failed, no backend named)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from tests.recorder.conftest import run_ttrecord

pytestmark = pytest.mark.spawns

EAGER = """\
import torch
import ttnn

device = ttnn.open_device(device_id=0)
x = ttnn.from_torch(torch.ones(32, 32), layout=ttnn.TILE_LAYOUT, device=device)
print(float(ttnn.to_torch(ttnn.relu(x)).sum()))
ttnn.close_device(device)
"""


def _record(tmp: Path, name: str, text: str, env: dict | None = None):
    (tmp / f"{name}.py").write_text(text)
    return run_ttrecord(["run", "--backend", "emulator", "-o", f"{name}.db", f"{name}.py"],
                        cwd=tmp, env_extra=env)  # fmt: skip


@pytest.mark.parametrize("name, text, sentence", [
    ("no_ttnn", "print('hello')\n", "No ttnn call was recorded"),
    ("syntax_error", "def broken(:\n", "No ttnn call was recorded"),
    ("eager_only", EAGER, "only `ttrecord run --audit-region QUALNAME` can judge"),
])  # fmt: skip
def test_nothing_recorded_or_captured_exits_4(tmp_path, name, text, sentence):
    # GIVEN a program that never reaches ttnn, does not compile, or never captures
    _record(tmp_path, name, text)
    # WHEN it is checked
    proc = run_ttrecord(["check", f"{name}.db"], cwd=tmp_path)
    # THEN check exits 4 and says why in its last line, never "No trace hazards found"
    assert proc.returncode == 4, proc.stdout + proc.stderr
    out = " ".join(proc.stdout.split())
    assert sentence in out and "Nothing to judge" in out
    assert "No trace hazards found" not in out
    # AND --allow-empty lets it pass (a program that did not even compile did not finish: 3)
    allowed = run_ttrecord(["check", "--allow-empty", f"{name}.db"], cwd=tmp_path)
    assert allowed.returncode == (3 if name == "syntax_error" else 0)
    # AND JSON says it too
    js = run_ttrecord(["check", "--format", "json", f"{name}.db"], cwd=tmp_path)
    assert js.returncode == 4 and sentence in js.stdout
    # AND the report says it in one line instead of "No trace hazards found"
    rep = run_ttrecord(["report", f"{name}.db"], cwd=tmp_path)
    assert rep.returncode == 0 and "Nothing to judge" in rep.stdout
    assert "No trace hazards found" not in rep.stdout


def test_eager_only_run_check_says_nothing_to_judge(tmp_path):
    # GIVEN an eager-only program recorded with run --check
    (tmp_path / "e.py").write_text(EAGER)
    proc = run_ttrecord(["run", "--backend", "emulator", "--check", "-o", "e.db", "e.py"],
                        cwd=tmp_path)  # fmt: skip
    # THEN the run's exit status is the check's 4, named in the both-codes line
    assert proc.returncode == 4, proc.stderr
    assert "check exit code 4 (nothing to judge)" in proc.stderr


def test_emulator_without_torch_is_a_ttrecord_failure(tmp_path):
    # GIVEN a Python where torch cannot be imported (a stand-in module that fails as a
    # missing torch does) and a program
    fake = tmp_path / "no_torch"
    fake.mkdir()
    (fake / "torch.py").write_text(
        "raise ModuleNotFoundError(\"No module named 'torch'\", name='torch')\n")
    (tmp_path / "p.py").write_text("import ttnn\n")
    # WHEN recorded on the emulator
    env = {"PYTHONPATH": f"{fake}:{Path(__file__).resolve().parents[2]}"}
    proc = run_ttrecord(["run", "--backend", "emulator", "-o", "p.db", "p.py"], cwd=tmp_path,
                        env_extra=env)  # fmt: skip
    # THEN ttrecord exits 125 with one line, no traceback
    assert proc.returncode == 125, proc.stderr
    assert "Traceback" not in proc.stderr
    lines = [ln for ln in proc.stderr.splitlines() if ln.startswith("ttrecord run:")]
    assert len(lines) == 1 and "cannot load" in lines[0] and "torch" in lines[0]
    # AND the session is kept, marked failed with the reason, naming no backend
    with sqlite3.connect(tmp_path / "p.db") as conn:
        status, backend, reason, error = conn.execute(
            "SELECT status, backend, backend_reason, error_message FROM session").fetchone()
    assert status == "error" and backend == "none"
    assert "torch" in reason and "torch" in error
    # AND check exits 4 (no backend ran), report never names another backend
    check = run_ttrecord(["check", "p.db"], cwd=tmp_path)
    assert check.returncode == 4 and "No backend ran" in " ".join(check.stdout.split())
    rep = run_ttrecord(["report", "p.db"], cwd=tmp_path)
    assert "backend none" in rep.stdout and "real device" not in rep.stdout
    assert "emulator (ttrecord's" not in rep.stdout
