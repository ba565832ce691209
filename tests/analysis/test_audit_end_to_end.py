"""Audit mode end to end: `ttrecord run --audit-region Decoder.forward` on an eager decoder
that has never been captured reports every capture blocker of `forward` in one run."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ttrecord.cli.main import main

pytestmark = pytest.mark.spawns

TTRECORD = Path(sys.executable).with_name("ttrecord")
MODEL = '''\
import torch
try:
    import ttnn
except ImportError:
    from ttrecord import emulator as ttnn


class Decoder:
    def __init__(self, device):
        self.device = device
        self.w = ttnn.from_torch(torch.randn(32, 32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)

    def forward(self, token, pos):
        x = ttnn.from_torch(torch.full((32, 32), float(token)), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=self.device)
        h = ttnn.matmul(x, self.w)
        h = ttnn.multiply(h, 1.0 / (pos + 1))
        ttnn.synchronize_device(self.device)
        return int(ttnn.to_torch(h)[0, 0].item()) % 7


device = ttnn.open_device(device_id=0, trace_region_size=800768)
decoder = Decoder(device)
token = 1
for pos in range(3):
    token = decoder.forward(token, pos)
ttnn.close_device(device)
'''


def test_every_blocker_of_the_audited_function_is_reported(tmp_path, capsys):
    if not TTRECORD.exists():
        pytest.skip("needs the ttrecord script")
    (tmp_path / "model.py").write_text(MODEL)
    session = tmp_path / "audit.db"
    subprocess.run(
        [str(TTRECORD), "run", "--backend", "emulator", "--timeout", "120", "-o", str(session),
         "--audit-region", "Decoder.forward", "model.py"],
        cwd=tmp_path, capture_output=True, timeout=180,
    )  # fmt: skip
    assert main(["check", str(session), "--format", "json"]) == 1
    findings = json.loads(capsys.readouterr().out)["findings"]
    # from_torch (14) writes, multiply's scalar (16) varies, sync (17), to_torch (18) reads
    assert sorted((f["id"], f["line"]) for f in findings) == [
        ("TR001", 18), ("TR002", 14), ("TR003", 17), ("TR007", 16)
    ]  # fmt: skip
    assert all("in audit region Decoder.forward" in f["message"] for f in findings)
    assert next(f for f in findings if f["id"] == "TR001")["evidence"]["occurrences"] == 3
