"""`TTRECORD_EMULATOR_RELEASE` chooses which release's dynamic-trace-region checks the emulator
makes: 0.81.1 (the default) refuses a trace buffer below a live trace's mark, 0.75.0 places it
(samples/dynamic_traces_overlap.py: TR010 on what that release let through)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.spawns

SAMPLE = Path(__file__).resolve().parents[2] / "samples" / "dynamic_traces_overlap.py"


def _run(release: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "TTRECORD_EMULATOR_RELEASE": release}
    return subprocess.run([sys.executable, str(SAMPLE)], capture_output=True, text=True, env=env, timeout=120)


def test_0_81_1_refuses_the_second_trace_buffer_and_0_75_0_places_it():
    refused = _run("0.81.1")
    assert refused.returncode != 0
    assert "overlaps with DRAM activity captured by another live trace" in refused.stderr
    placed = _run("0.75.0")
    assert placed.returncode == 0, placed.stderr
    assert placed.stdout.startswith("out: 1.5")
