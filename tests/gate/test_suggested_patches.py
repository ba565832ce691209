"""Rule: where the fix is mechanical, check suggests the patch itself (text, JSON `patch`,
SARIF `fixes`): a unified diff against the stored source that `patch -p0` applies in the
run's folder, after which a new recording has no finding."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.recorder.conftest import run_ttrecord

pytestmark = pytest.mark.spawns

SAMPLES = Path(__file__).resolve().parents[2] / "samples"

READ_IN_CAPTURE = """\
import torch
import ttnn

device = ttnn.open_device(device_id=0, trace_region_size=800768)
x = ttnn.from_torch(torch.randn(32, 32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
y = ttnn.relu(x)
tid = ttnn.begin_trace_capture(device, cq_id=0)
y = ttnn.relu(x)
try:
    pass
finally:
    pass
print(ttnn.to_torch(y).sum())  # debug read
ttnn.end_trace_capture(device, tid, cq_id=0)
ttnn.execute_trace(device, tid, cq_id=0, blocking=True)
ttnn.release_trace(device, tid)
ttnn.close_device(device)
"""


def _patch_and_rerecord(folder: Path, script: str, rule: str, *run_flags: str) -> dict:
    first = run_ttrecord(["run", "--backend", "emulator", *run_flags, "-o", "before.db", script],
                         cwd=folder)  # fmt: skip
    check = run_ttrecord(["check", "--format", "json", "before.db"], cwd=folder)
    findings = json.loads(check.stdout)["findings"]
    assert [f["id"] for f in findings] == [rule], first.stderr
    diff = findings[0]["patch"]
    assert diff.startswith(f"--- {script}\n+++ {script}\n")
    (folder / "fix.diff").write_text(diff)
    applied = subprocess.run(["patch", "-p0", "-i", "fix.diff"], cwd=folder, capture_output=True,
                             text=True)  # fmt: skip
    assert applied.returncode == 0, applied.stdout + applied.stderr
    run_ttrecord(["run", "--backend", "emulator", "-o", "after.db", script], cwd=folder)
    after = run_ttrecord(["check", "--format", "json", "after.db"], cwd=folder)
    assert json.loads(after.stdout)["findings"] == []
    assert after.returncode == 0
    return findings[0]


@pytest.mark.skipif(shutil.which("patch") is None, reason="needs the `patch` program")
def test_stale_input_patch_copies_into_the_captured_input(tmp_path):
    # GIVEN a copy of samples/stale_input.py (a new device tensor before each replay)
    shutil.copy(SAMPLES / "stale_input.py", tmp_path / "stale_input.py")
    # WHEN recorded, checked, patched with the suggested patch and recorded again
    finding = _patch_and_rerecord(tmp_path, "stale_input.py", "TR005")
    # THEN the patch turned the new device tensor into a copy into the captured `x`
    assert "+        ttnn.copy_host_to_device_tensor(x_new, x)" in finding["patch"]
    added = [ln for ln in finding["patch"].splitlines() if ln.startswith("+") and not ln.startswith("+++")]
    assert len(added) == 2 and not any("device=" in ln for ln in added)


@pytest.mark.skipif(shutil.which("patch") is None, reason="needs the `patch` program")
def test_a_read_inside_the_capture_moves_after_execute_trace(tmp_path):
    (tmp_path / "debug_read.py").write_text(READ_IN_CAPTURE)
    finding = _patch_and_rerecord(tmp_path, "debug_read.py", "TR001", "--keep-going")
    assert finding["patch"].index("-print(") < finding["patch"].index("+print(")


def test_text_and_sarif_carry_the_patch(tmp_path):
    shutil.copy(SAMPLES / "stale_input.py", tmp_path / "stale_input.py")
    run_ttrecord(["run", "--backend", "emulator", "-o", "s.db", "stale_input.py"], cwd=tmp_path)
    text = run_ttrecord(["check", "s.db"], cwd=tmp_path).stdout
    assert "suggested patch:" in text and "+        ttnn.copy_host_to_device_tensor(x_new, x)" in text
    sarif = json.loads(run_ttrecord(["check", "--format", "sarif", "s.db"], cwd=tmp_path).stdout)
    (result,) = sarif["runs"][0]["results"]
    (fix,) = result["fixes"]
    (change,) = fix["artifactChanges"]
    assert change["artifactLocation"] == {"uri": "stale_input.py", "uriBaseId": "SRCROOT"}
    (rep,) = change["replacements"]
    assert "copy_host_to_device_tensor(x_new, x)" in rep["insertedContent"]["text"]
    assert rep["deletedRegion"]["startLine"] == result["locations"][0]["physicalLocation"]["region"]["startLine"]
