"""Rule: `check --baseline OLD` shows each finding as fixed, still there or new, matched by a
fingerprint that survives lines moving (rule, file, the line's text, function, index), and
only new findings count for the exit status; OLD is a session or `check --format json`."""

from __future__ import annotations

import json
from pathlib import Path

from ttrecord.cli.main import main
from ttrecord.testing import SessionBuilder
import pytest

pytestmark = pytest.mark.slow

X, W, H = 0x100000, 0x100800, 0x101000

BEFORE = """\
import ttnn
device = ttnn.open_device(device_id=0)
x = make(device)
tid = ttnn.begin_trace_capture(device, cq_id=0)
y = ttnn.relu(x)
print(ttnn.to_torch(y))
ttnn.copy_host_to_device_tensor(host, x)
ttnn.end_trace_capture(device, tid, cq_id=0)
ttnn.release_trace(device, tid)
"""
# The readback kept (two lines lower), the host write fixed, a synchronize added.
AFTER = """\
import ttnn
# moved
# down
device = ttnn.open_device(device_id=0)
x = make(device)
tid = ttnn.begin_trace_capture(device, cq_id=0)
y = ttnn.relu(x)
print(ttnn.to_torch(y))
ttnn.synchronize_device(device)
ttnn.end_trace_capture(device, tid, cq_id=0)
ttnn.release_trace(device, tid)
"""


def _session(folder: Path, source: str, name: str) -> str:
    script = folder / "model.py"
    script.write_text(source)  # the session stores the text as it is now
    lines = {text.strip(): n for n, text in enumerate(source.splitlines(), 1)}
    b = SessionBuilder(file=str(script))
    b.open_device(line=lines["device = ttnn.open_device(device_id=0)"])
    x = b.alloc(X)
    tid = b.begin_trace(line=lines["tid = ttnn.begin_trace_capture(device, cq_id=0)"])
    y = b.alloc(W)
    b.op("ttnn.relu", [x], [y], line=lines["y = ttnn.relu(x)"])
    b.d2h(y, line=lines["print(ttnn.to_torch(y))"])
    if "ttnn.copy_host_to_device_tensor(host, x)" in lines:
        b.h2d(x, line=lines["ttnn.copy_host_to_device_tensor(host, x)"])
    if "ttnn.synchronize_device(device)" in lines:
        b.sync(line=lines["ttnn.synchronize_device(device)"])
    b.end_trace(tid, line=lines["ttnn.end_trace_capture(device, tid, cq_id=0)"])
    b.release(tid, line=lines["ttnn.release_trace(device, tid)"])
    return b.write(folder / name)


def test_a_pair_of_sessions_gives_one_fixed_and_one_new(tmp_path, capsys):
    # GIVEN a session with a readback and a host write in the capture, and a later one where
    # the readback moved two lines down, the write is gone and a synchronize came in
    old = _session(tmp_path, BEFORE, "old.db")
    new = _session(tmp_path, AFTER, "new.db")
    # WHEN the new one is checked against the old one
    code = main(["check", new, "--baseline", old])
    out = " ".join(capsys.readouterr().out.split())
    # THEN 1 fixed (TR002), 1 still there (TR001, moved), 1 new (TR003)
    assert f"Against baseline {old}: 1 fixed, 1 still there, 1 new." in out
    assert "TR003 Synchronize" in out or "TR003" in out
    assert "fixed TR002" in out
    assert "[new]" in out and "[still there]" in out
    # AND the exit status is the new finding's (an error)
    assert code == 1


def test_only_new_findings_count_and_a_json_baseline_works(tmp_path, capsys):
    # GIVEN the same session as its own baseline, written as check JSON
    old = _session(tmp_path, BEFORE, "old.db")
    assert main(["check", old]) == 1
    capsys.readouterr()
    main(["check", old, "--format", "json", "-o", str(tmp_path / "base.json")])
    # WHEN checked against it
    code = main(["check", old, "--baseline", str(tmp_path / "base.json"), "--format", "json"])
    doc = json.loads(capsys.readouterr().out)
    # THEN nothing is new, so the gate passes, and every finding says it is still there
    assert code == 0
    assert doc["baseline"]["new"] == 0 and doc["baseline"]["still_there"] == 2
    assert doc["baseline"]["fixed"] == []
    assert {f["baseline_state"] for f in doc["findings"]} == {"still there"}


def test_sarif_carries_fingerprints_and_baseline_state(tmp_path, capsys):
    old = _session(tmp_path, BEFORE, "old.db")
    new = _session(tmp_path, AFTER, "new.db")
    main(["check", new, "--baseline", old, "--format", "sarif"])
    results = json.loads(capsys.readouterr().out)["runs"][0]["results"]
    states = {r["ruleId"]: r["baselineState"] for r in results}
    assert states == {"TR001": "unchanged", "TR003": "new"}
    assert all(r["partialFingerprints"]["ttrecordFinding/v1"].startswith(r["ruleId"]) for r in results)


def test_a_bad_baseline_is_one_line_exit_2(tmp_path, capsys):
    new = _session(tmp_path, AFTER, "new.db")
    (tmp_path / "junk.json").write_text("{not json")
    assert main(["check", new, "--baseline", str(tmp_path / "junk.json")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "neither a session nor the JSON" in err[0]
