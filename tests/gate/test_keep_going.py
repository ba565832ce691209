"""Rule: `ttrecord run --keep-going` (emulator) records a TT_FATAL inside a capture with the
message ttnn gives and goes on as if the call were made outside it, so one run shows every
mistake; each such finding says it was seen in keep-going mode. Without the flag the first
one stops the program, as on real ttnn."""

from __future__ import annotations

import json

from tests.recorder.conftest import run_ttrecord
import pytest

pytestmark = pytest.mark.spawns

THREE_MISTAKES = """\
import torch
import ttnn

device = ttnn.open_device(device_id=0, trace_region_size=800768)
x = ttnn.from_torch(torch.randn(32, 32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
host = ttnn.from_torch(torch.randn(32, 32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
y = ttnn.relu(x)  # warm-up of relu only
tid = ttnn.begin_trace_capture(device, cq_id=0)
y = ttnn.relu(x)
print(ttnn.to_torch(y).shape)  # a readback
ttnn.copy_host_to_device_tensor(host, x)  # a host write
z = ttnn.exp(y)  # a compile: exp was never warmed up
ttnn.end_trace_capture(device, tid, cq_id=0)
ttnn.execute_trace(device, tid, cq_id=0, blocking=True)
ttnn.release_trace(device, tid)
ttnn.close_device(device)
"""


def test_three_capture_fatal_mistakes_in_one_run(tmp_path):
    # GIVEN a capture with a readback, a host write and a compile
    (tmp_path / "three.py").write_text(THREE_MISTAKES)
    # WHEN recorded with --keep-going
    run = run_ttrecord(["run", "--backend", "emulator", "--keep-going", "-o", "k.db", "three.py"],
                       cwd=tmp_path)  # fmt: skip
    # THEN the program runs to its end, and ttnn's messages were said on stderr
    assert run.returncode == 0, run.stderr
    assert "Reads are not supported during trace capture." in run.stderr
    assert "Writes are not supported during trace capture. trace id: 0" in run.stderr
    assert "Cannot load new binaries during trace capture." in run.stderr
    # AND one check shows all three, at their lines, each saying keep-going mode
    check = run_ttrecord(["check", "--format", "json", "k.db"], cwd=tmp_path)
    assert check.returncode == 1
    found = {f["id"]: f for f in json.loads(check.stdout)["findings"]}
    assert set(found) == {"TR001", "TR002", "TR013"}
    assert (found["TR001"]["line"], found["TR002"]["line"], found["TR013"]["line"]) == (10, 11, 12)
    assert found["TR001"]["keep_going"] == "Reads are not supported during trace capture."
    assert found["TR002"]["keep_going"].startswith("Writes are not supported during trace capture.")
    assert found["TR013"]["keep_going"].startswith("Cannot load new binaries during trace capture.")
    text = run_ttrecord(["check", "k.db"], cwd=tmp_path).stdout
    assert " ".join(text.split()).count("seen in keep-going mode") == 3


def test_without_keep_going_the_first_fatal_stops_the_program(tmp_path):
    (tmp_path / "three.py").write_text(THREE_MISTAKES)
    run = run_ttrecord(["run", "--backend", "emulator", "-o", "s.db", "three.py"], cwd=tmp_path)
    assert run.returncode == 1
    assert "Reads are not supported during trace capture." in run.stderr
    check = run_ttrecord(["check", "--format", "json", "s.db"], cwd=tmp_path)
    assert [f["id"] for f in json.loads(check.stdout)["findings"]] == ["TR001"]
    assert "keep_going" not in json.loads(check.stdout)["findings"][0]


def test_keep_going_refuses_real_ttnn(tmp_path):
    (tmp_path / "p.py").write_text("pass\n")
    run = run_ttrecord(["run", "--backend", "ttnn", "--keep-going", "p.py"], cwd=tmp_path)
    assert run.returncode == 125 and "--keep-going needs the emulator" in run.stderr
