"""Rule: with thousands of live buffers (a model's weights) the recorder still sees every
allocation and free exactly, although it reads the allocator's full view only where a hazard
is decided: an allocation after capture is reported with its exact range and line, and a free
by reference drop between two calls sits between those two calls."""

from __future__ import annotations

import json
import subprocess
import textwrap

from tests.recorder.conftest import TTRECORD, record
import pytest

pytestmark = pytest.mark.spawns

SCRIPT = """
import torch
import ttnn

def tile(v):
    return ttnn.from_torch(torch.full((32, 32), v), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)

def step(x, w):
    hidden = ttnn.add(x, w)  # freed when step returns: its address is trace memory
    return ttnn.multiply(hidden, 0.5)

device = ttnn.open_device(device_id=0, trace_region_size=800768)
weights = [tile(0.0) for _ in range(5000)]  # five thousand live buffers
x, w = tile(3.0), tile(5.0)
doomed = ttnn.relu(x)
print("doomed", doomed.buffer_address())
del doomed  # a free by reference drop, no ttnn call in sight
kept = ttnn.relu(w)  # MARK:after_drop
out = step(x, w)
tid = ttnn.begin_trace_capture(device, cq_id=0)
out = step(x, w)
ttnn.end_trace_capture(device, tid, cq_id=0)
bias = ttnn.from_torch(torch.ones(32, 64), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)  # MARK:late
print("late", bias.buffer_address())
ttnn.execute_trace(device, tid, cq_id=0, blocking=True)
ttnn.release_trace(device, tid)
ttnn.close_device(device)
"""


def _line(mark: str) -> int:
    lines = textwrap.dedent(SCRIPT).splitlines()
    return next(i for i, text in enumerate(lines, start=1) if f"MARK:{mark}" in text)


def test_exact_allocations_and_frees_with_5000_live_buffers(tmp_path):
    """GIVEN 5,000 live buffers, a tensor dropped between two calls, and a tensor allocated
    after capture on the trace's freed intermediate WHEN recorded and checked THEN the FREE of
    the dropped buffer comes between the relu before and the relu after the drop (outside any
    call), and TR004 names the late allocation's line with its exact bank-local range."""
    script = tmp_path / "model.py"
    script.write_text(textwrap.dedent(SCRIPT))
    rec = record(script, tmp_path)
    assert rec.proc.returncode == 0, rec.proc.stderr[-2000:]
    printed = dict(line.split() for line in rec.proc.stdout.splitlines())
    doomed, late = int(printed["doomed"]), int(printed["late"])

    # every weight was recorded as allocated
    allocs = rec.rows("SELECT COUNT(*) AS n FROM events e JOIN buffers b ON b.id = e.buffer"
                      " WHERE e.kind = 'alloc' AND b.buffer_type = 'DRAM'")[0]["n"]
    assert allocs >= 5000 + 2

    relus = [r["seq"] for r in rec.rows("SELECT seq FROM events WHERE name LIKE '%relu' ORDER BY seq")]
    frees = rec.rows("SELECT e.seq, e.parent FROM events e JOIN buffers b ON b.id = e.buffer"
                     " WHERE e.kind = 'free' AND b.address = ? ORDER BY e.seq", doomed)
    assert frees and frees[0]["parent"] is None
    assert relus[0] < frees[0]["seq"] < relus[1]

    check = subprocess.run([*TTRECORD, "check", "--format", "json", str(rec.path)],
                           capture_output=True, text=True, timeout=120)
    findings = json.loads(check.stdout)["findings"]
    tr004 = [f for f in findings if f["id"] == "TR004"]
    assert len(tr004) == 1, findings
    assert tr004[0]["line"] == _line("late")
    # 32x64 bf16: two 2048-byte tile pages over 8 DRAM banks, 2048 bytes per bank (another
    # shape than the inputs: a same-spec tensor made after capture reads as a new input, TR005)
    assert tr004[0]["evidence"]["allocated"]["range"] == f"[{late:#x}, {late + 2048:#x})"
