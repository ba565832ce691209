"""One injected mistake in a traced decode loop gives one primary finding, at the line to fix.

A decode loop (eager steps, a prep run, a capture, replays with the input copied in) is
recorded on the emulator as written, and with one mistake a model engineer makes: a debug
readback inside the captured step, an allocation after capture kept across the replays, a
new input tensor each step instead of a copy into the captured one, a Python value that
changes per step. Each must give exactly one finding, at the line marked `# FIX:<mistake>`,
whatever else that mistake set off (folded under it).
"""

from __future__ import annotations

import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from ttrecord.analysis import analyze
from ttrecord.store.reader import Session

pytestmark = pytest.mark.spawns

TTRECORD = Path(sys.executable).with_name("ttrecord")

DECODE = '''\
import sys

import torch

try:
    import ttnn
except ImportError:
    from ttrecord import emulator as ttnn

MISTAKE = sys.argv[1] if len(sys.argv) > 1 else ""


def host(pos):
    return ttnn.from_torch(torch.full((32, 32), float(pos + 1)), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)


def decode_step(x, w1, w2, pos):
    h = ttnn.gelu(ttnn.matmul(x, w1))
    if MISTAKE == "readback":
        try:
            print("debug", ttnn.to_torch(h).float().mean().item())  # FIX:readback
        except RuntimeError:
            pass  # real ttnn aborts reads in a capture; the loop goes on
    scale = 1.0 / (pos + 1) if MISTAKE == "value" else 1.0
    logits = ttnn.multiply(ttnn.matmul(h, w2), scale)  # FIX:value
    return ttnn.softmax(logits, dim=-1)


def main():
    device = ttnn.open_device(device_id=0, trace_region_size=800768)
    w1 = ttnn.from_torch(torch.eye(32) / 8, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    w2 = ttnn.from_torch(torch.eye(32) / 8, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    for pos in range(3):  # eager reference steps
        x = ttnn.to_device(host(pos), device)
        ttnn.to_torch(decode_step(x, w1, w2, pos))
    x_in = ttnn.to_device(host(0), device)
    decode_step(x_in, w1, w2, 0)  # prep run: compiles every program
    trace_id = ttnn.begin_trace_capture(device, cq_id=0)
    out = decode_step(x_in, w1, w2, 0)
    ttnn.end_trace_capture(device, trace_id, cq_id=0)
    if MISTAKE == "alloc":
        kept = ttnn.from_torch(torch.zeros(32, 32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)  # FIX:alloc
    for pos in range(4):
        if MISTAKE == "new_input":
            x_in = ttnn.from_torch(torch.full((32, 32), float(pos + 1)), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)  # FIX:new_input
        else:
            ttnn.copy_host_to_device_tensor(host(pos), x_in)
        ttnn.execute_trace(device, trace_id, cq_id=0, blocking=False)
        ttnn.to_torch(out)
    if MISTAKE == "alloc":
        ttnn.to_torch(kept)  # the program uses the tensor the replays wrote over
    ttnn.release_trace(device, trace_id)
    ttnn.close_device(device)


main()
'''

MISTAKES = {
    "": [],
    "readback": [("TR001", "FIX:readback")],
    "alloc": [("TR004", "FIX:alloc")],
    "new_input": [("TR005", "FIX:new_input")],
    "value": [("TR007", "FIX:value")],
}


def _line(marker: str) -> int:
    return next(i for i, text in enumerate(DECODE.splitlines(), 1) if marker in text)


@pytest.fixture(scope="module")
def recorded(tmp_path_factory) -> dict[str, Path]:
    if not TTRECORD.exists():
        pytest.skip("needs the ttrecord script")
    folder = tmp_path_factory.mktemp("decode")
    script = folder / "decode.py"
    script.write_text(DECODE)

    def record(mistake: str) -> tuple[str, Path]:
        out = folder / f"decode-{mistake or 'clean'}.db"
        subprocess.run(
            [str(TTRECORD), "run", "--backend", "emulator", "--timeout", "120", "-o", str(out),
             str(script), *([mistake] if mistake else [])],
            cwd=folder, capture_output=True, timeout=180,
        )  # fmt: skip
        return mistake, out

    with ThreadPoolExecutor(max_workers=2) as pool:
        return dict(pool.map(record, MISTAKES))


@pytest.mark.parametrize("mistake", list(MISTAKES), ids=lambda m: m or "clean")
def test_one_mistake_gives_one_finding_at_the_line_to_fix(mistake, recorded):
    path = recorded[mistake]
    assert path.exists(), f"{mistake or 'clean'} was not recorded"
    with Session.open(path) as s:
        findings = analyze(s)
    got = [(f.rule, Path(f.file).name if f.file else None, f.line) for f in findings]
    want = [(rule, "decode.py", _line(marker)) for rule, marker in MISTAKES[mistake]]
    assert got == want, [f.message for f in findings]
    # AND a mistake proven by the recording is an error (CI fails on it)
    assert all(str(f.severity) == "error" for f in findings)
