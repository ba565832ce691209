"""A finding whose line is a helper that correct calls share goes to the caller that made the
mistake: the frame of its call path that no harmless call at that line came through.

One program routes every device input through `to_input()`: the eager steps, the warm-up and
the replay loop (copying into the captured input) call it correctly. Its two mistakes go
through the same helper line: staging every input after capture (TR004) and making a new
input each step instead of copying into the captured one (TR005). Each finding must name the
caller's line and keep the helper line as evidence.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from ttrecord.analysis import analyze
from ttrecord.store.reader import Session

pytestmark = pytest.mark.spawns

TTRECORD = Path(sys.executable).with_name("ttrecord")

PROGRAM = '''\
import sys

import torch

try:
    import ttnn
except ImportError:
    from ttrecord import emulator as ttnn

MISTAKE = sys.argv[1] if len(sys.argv) > 1 else ""


def host(pos):
    return ttnn.from_torch(torch.full((32, 32), float(pos + 1)), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)


def to_input(pos, device, into=None):
    if into is not None:
        ttnn.copy_host_to_device_tensor(host(pos), into)
        return into
    return ttnn.to_device(host(pos), device)  # HELPER


def step(x, w):
    return ttnn.softmax(ttnn.matmul(ttnn.gelu(ttnn.matmul(x, w)), w), dim=-1)


def main():
    device = ttnn.open_device(device_id=0, trace_region_size=800768)
    w = ttnn.from_torch(torch.eye(32) / 8, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    for pos in range(3):  # eager reference steps
        ttnn.to_torch(step(to_input(pos, device), w))
    x_in = to_input(0, device)
    step(x_in, w)  # prep run
    trace_id = ttnn.begin_trace_capture(device, cq_id=0)
    out = step(x_in, w)
    ttnn.end_trace_capture(device, trace_id, cq_id=0)
    if MISTAKE == "staged":
        staged = [to_input(pos, device) for pos in range(4)]  # FIX:staged
    for pos in range(4):
        if MISTAKE == "staged":
            ttnn.copy_host_to_device_tensor(ttnn.from_device(staged[pos]), x_in)
        elif MISTAKE == "new_input":
            x_in = to_input(pos, device)  # FIX:new_input
        else:
            to_input(pos, device, into=x_in)
        ttnn.execute_trace(device, trace_id, cq_id=0, blocking=False)
        ttnn.to_torch(out)
    ttnn.release_trace(device, trace_id)
    ttnn.close_device(device)


main()
'''

MISTAKES = {"staged": "TR004", "new_input": "TR005"}


def _line(marker: str) -> int:
    return next(i for i, text in enumerate(PROGRAM.splitlines(), 1) if marker in text)


@pytest.fixture(scope="module")
def recorded(tmp_path_factory) -> dict[str, Path]:
    if not TTRECORD.exists():
        pytest.skip("needs the ttrecord script")
    folder = tmp_path_factory.mktemp("helper")
    (folder / "prog.py").write_text(PROGRAM)
    out = {}
    for mistake in ("", *MISTAKES):
        db = folder / f"{mistake or 'clean'}.db"
        subprocess.run(
            [str(TTRECORD), "run", "--backend", "emulator", "--timeout", "120", "-o", str(db),
             "prog.py", *([mistake] if mistake else [])],
            cwd=folder, capture_output=True, timeout=180,
        )  # fmt: skip
        out[mistake] = db
    return out


def _findings(path: Path):
    assert path.exists()
    with Session.open(path) as s:
        return analyze(s)


def test_the_clean_program_has_no_finding(recorded):
    assert _findings(recorded[""]) == []


@pytest.mark.parametrize("mistake", list(MISTAKES))
def test_a_mistake_through_a_shared_helper_is_placed_on_its_caller(mistake, recorded):
    findings = _findings(recorded[mistake])
    got = [(f.rule, f.line) for f in findings]
    assert got == [(MISTAKES[mistake], _line(f"FIX:{mistake}"))], [f.message for f in findings]
    # AND the helper line the call went through is kept, not lost
    assert findings[0].evidence["helper"].endswith(f"prog.py:{_line('# HELPER')} in to_input")


def test_a_helper_whose_every_call_is_the_mistake_keeps_the_finding(tmp_path):
    """No harmless call at the line: nothing tells the caller apart, the helper is the line."""
    if not TTRECORD.exists():
        pytest.skip("needs the ttrecord script")
    only = PROGRAM.replace("ttnn.to_torch(step(to_input(pos, device), w))",
                           "ttnn.to_torch(step(ttnn.to_device(host(pos), device), w))")
    only = only.replace("x_in = to_input(0, device)", "x_in = ttnn.to_device(host(0), device)")
    (tmp_path / "prog.py").write_text(only)
    db = tmp_path / "s.db"
    subprocess.run([str(TTRECORD), "run", "--backend", "emulator", "--timeout", "120", "-o", str(db),
                    "prog.py", "new_input"], cwd=tmp_path, capture_output=True, timeout=180)  # fmt: skip
    findings = _findings(db)
    assert [(f.rule, f.line) for f in findings] == [("TR005", _line("# HELPER"))]
    assert "helper" not in findings[0].evidence
