"""Rule: `report` (text, JSON) and the HTML page say how to drive each trace: the captured
inputs to copy into before each replay, with the Python name and line where each was made,
the outputs to read, and a replay loop written with the program's own names."""

from __future__ import annotations

import json
from pathlib import Path

from ttrecord.cli.main import main
from ttrecord.testing import SessionBuilder
import pytest

pytestmark = pytest.mark.slow

SOURCE = """\
import ttnn
device = ttnn.open_device(device_id=0)
weights = make_weights(device)
tokens = make_tokens(device)
hidden = ttnn.matmul(tokens, weights)
decode_tid = ttnn.begin_trace_capture(device, cq_id=0)
hidden = ttnn.matmul(tokens, weights)
logits = ttnn.relu(hidden)
ttnn.end_trace_capture(device, decode_tid, cq_id=0)
ttnn.execute_trace(device, decode_tid, cq_id=0)
"""
W, T, H, H2, L = 0x100000, 0x100800, 0x101000, 0x101800, 0x102000


def build(folder: Path) -> str:
    script = folder / "decode.py"
    script.write_text(SOURCE)
    b = SessionBuilder(file=str(script))
    b.open_device(line=2)
    w, t = b.alloc(W), b.alloc(T)
    b.h2d(w, line=3, name="from_torch")
    b.h2d(t, line=4, name="from_torch")
    h = b.alloc(H)
    b.op("ttnn.matmul", [t, w], [h], line=5)
    tid = b.begin_trace(line=6)
    h2 = b.alloc(H2)
    b.op("ttnn.matmul", [t, w], [h2], line=7)
    out = b.alloc(L)
    b.op("ttnn.relu", [h2], [out], line=8)
    b.free(h2)
    b.end_trace(tid, line=9)
    b.execute(tid, line=10)
    return b.write(folder / "decode.db")


def test_report_says_what_to_copy_into_and_what_to_read(tmp_path, capsys):
    session = build(tmp_path)
    main(["report", session])
    out = capsys.readouterr().out
    section = out[out.index("How to drive trace 0"):]
    # the inputs by name and the line that made them; the intermediate `hidden` is not one
    assert "`tokens` [32, 32] BFLOAT16, at decode.py:4" in section
    assert "`weights` [32, 32] BFLOAT16, at decode.py:3" in section
    assert "`logits` [32, 32] BFLOAT16, at decode.py:8" in section
    assert "`hidden`" not in section
    # a replay loop with the program's names
    assert "ttnn.copy_host_to_device_tensor(host_tokens, tokens)" in section
    assert "ttnn.execute_trace(device, decode_tid, cq_id=0, blocking=True)" in section
    assert "result_logits = ttnn.to_torch(logits)" in section


def test_report_json_carries_the_plan(tmp_path, capsys):
    session = build(tmp_path)
    main(["report", "--format", "json", session])
    doc = json.loads(capsys.readouterr().out)
    (plan,) = doc["drive"]
    assert [t["name"] for t in plan["inputs"]] == ["tokens", "weights"]
    assert [(t["name"], t["line"]) for t in plan["outputs"]] == [("logits", 8)]
    assert plan["captured"] == "decode.py:6-9"
    assert doc["nothing_to_judge"] is None
