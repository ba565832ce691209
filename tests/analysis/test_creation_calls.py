"""Creation calls with a device (`ttnn.zeros(..., device=)`, `full`, `arange`, the `_like`
forms) are host writes: TR002 inside a capture (samples/creation_in_capture.py) and in audit
mode; without a device they build a host tensor and are not writes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ttrecord.cli.main import main
from ttrecord.events import Kind
from ttrecord.recorder.classify import ALLOCATING, CREATION, CREATION_LIKE, DEVICE_OPS, module_kind, refine

TTRECORD = Path(sys.executable).with_name("ttrecord")


@pytest.mark.parametrize("name", sorted(CREATION | CREATION_LIKE))
def test_creation_call_is_a_write_only_with_a_device(name):
    kind = module_kind(name)
    assert kind is Kind.H2D
    assert refine(kind, name, has_device_arg=True, has_device_input=False) is Kind.H2D
    assert refine(kind, name, has_device_arg=False, has_device_input=False) is Kind.OP
    # `zeros_like(device_tensor)` is a fill op on its tensor's device, not a write
    like = refine(kind, name, has_device_arg=True, has_device_input=True)
    assert like is (Kind.OP if name in CREATION_LIKE else Kind.H2D)


@pytest.mark.parametrize("name", sorted(ALLOCATING | DEVICE_OPS))
def test_allocating_and_device_creation_calls_are_ops(name):
    assert module_kind(name) is Kind.OP


MODEL = '''\
import torch
try:
    import ttnn
except ImportError:
    from ttrecord import emulator as ttnn


class Step:
    def __init__(self, device):
        self.device = device
        self.x = ttnn.from_torch(torch.ones(32, 32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)

    def forward(self):
        bias = ttnn.zeros((32, 32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=self.device)
        host = ttnn.ones((32, 32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
        like = ttnn.ones_like(host, device=self.device)
        return ttnn.add(ttnn.add(self.x, bias), like), host


device = ttnn.open_device(device_id=0, trace_region_size=800768)
step = Step(device)
for _ in range(2):
    step.forward()
ttnn.close_device(device)
'''


@pytest.mark.spawns
def test_audit_mode_reports_creation_calls_with_a_device(tmp_path, capsys):
    if not TTRECORD.exists():
        pytest.skip("needs the ttrecord script")
    (tmp_path / "model.py").write_text(MODEL)
    session = tmp_path / "audit.db"
    subprocess.run(
        [str(TTRECORD), "run", "--backend", "emulator", "--timeout", "120", "-o", str(session),
         "--audit-region", "Step.forward", "model.py"],
        cwd=tmp_path, capture_output=True, timeout=180,
    )  # fmt: skip
    assert main(["check", str(session), "--format", "json"]) == 1
    findings = json.loads(capsys.readouterr().out)["findings"]
    # zeros(device=) (14) and ones_like(host tensor, device=) (16) write; ones() on the host
    # (15) is host-only work (TR008), not a write
    assert sorted((f["id"], f["line"]) for f in findings) == [
        ("TR002", 14), ("TR002", 16), ("TR008", 15)
    ]  # fmt: skip
    assert all("in audit region Step.forward" in f["message"] for f in findings)
