"""The trace allocation tracker's opt-outs are recorded: `acknowledge_corruptible(tensor)` as a
call on the tensor's buffer, `corruptible_allocation_scope(device)` as its call plus begin/end
notes on the device around what the scope allocated; the program sees the tracker unchanged."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys

import pytest
import torch

from ttrecord import emulator
from ttrecord.events import Kind
from tests.recorder.conftest import SAMPLES, run_ttrecord
from tests.recorder.inprocess import record_inprocess

pytestmark = pytest.mark.spawns


def _tensor(ttnn, device, value):
    return ttnn.from_torch(torch.full((32, 32), value), dtype=ttnn.bfloat16,
                           layout=ttnn.TILE_LAYOUT, device=device)  # fmt: skip


def _body(ttnn):
    tracker = ttnn.tools.trace_allocation_tracker
    device = ttnn.open_device(device_id=0, trace_region_size=800768)
    a = _tensor(ttnn, device, 1.0)
    tracker.acknowledge_corruptible(a)
    with tracker.corruptible_allocation_scope(device) as entered:
        assert entered is None  # what the tracker's own manager yields
        b = _tensor(ttnn, device, 2.0)
    with pytest.raises(KeyError), tracker.corruptible_allocation_scope(mesh_device=device):
        raise KeyError("the program's own error")
    ttnn.deallocate(b)
    ttnn.close_device(device)


def test_acknowledgement_names_the_buffer_and_scope_notes_bracket_its_allocations(tmp_path):
    events = record_inprocess(emulator, _body, tmp_path)
    allocs = [e for e in events if e.kind is Kind.ALLOC]
    (ack,) = [e for e in events if e.name.endswith("acknowledge_corruptible")]
    # the acknowledged tensor's buffer is the call's input: the first allocation's
    assert ack.kind is Kind.OP and ack.parent is None
    assert [_where(r.buffer) for r in ack.inputs] == [_where(allocs[0].buffer)]
    notes = [e for e in events if e.kind is Kind.NOTE and e.name.startswith("corruptible_scope")]
    assert [n.name for n in notes] == ["corruptible_scope_begin", "corruptible_scope_end"] * 2
    device = allocs[0].buffer.device
    assert all(n.args == {"device": device} for n in notes)
    # the second tensor is allocated between the first scope's begin and end; nothing in the
    # second (the program's exception still closes it)
    inside = [a for a in allocs if notes[0].seq < a.seq < notes[1].seq]
    assert [a.seq for a in inside] == [allocs[1].seq]
    assert not [a for a in allocs if notes[2].seq < a.seq < notes[3].seq]
    # each scope's notes point at the user's `with` line, the call itself is recorded too
    scopes = [e for e in events if e.name.endswith("corruptible_allocation_scope")]
    assert len(scopes) == 2 and all(e.kind is Kind.OP for e in scopes)
    assert notes[0].callsite is not None and notes[0].callsite.line == scopes[0].callsite.line


def _where(buf):
    return (buf.device, buf.buffer_type, buf.address, buf.size)


TRACKING = {"TT_METAL_TRACE_ALLOC_TRACKING": "1"}


def test_sample_runs_as_under_plain_python_with_tracking_and_reports_info(tmp_path):
    # GIVEN the acknowledged sample run with the tracker on, plainly and recorded
    script = SAMPLES / "acknowledged_corruptible.py"
    plain = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                           timeout=60, env={**_env(), **TRACKING}, cwd=tmp_path)  # fmt: skip
    out = tmp_path / "ack.db"
    rec = run_ttrecord(["run", "--backend", "emulator", "-o", str(out), str(script)], cwd=tmp_path,
                       env_extra=TRACKING)  # fmt: skip
    # THEN the tracker accepts both the same way (no error before the replay) and prints alike
    assert plain.returncode == 0 and rec.returncode == 0, rec.stderr
    assert rec.stdout == plain.stdout
    assert "scratch after replay:  8.0" in rec.stdout  # the replay did overwrite it
    check = run_ttrecord(["check", str(out), "--format", "json"], cwd=tmp_path)
    findings = json.loads(check.stdout)["findings"]
    assert [(f["id"], f["severity"]) for f in findings] == [("TR004", "info")]
    assert "acknowledged it as corruptible" in findings[0]["message"]


def test_unacknowledged_buffer_makes_the_tracker_raise_and_the_error_is_recorded(tmp_path, write_script):
    # GIVEN the sample without its acknowledgement, run with the tracker on
    text = (SAMPLES / "acknowledged_corruptible.py").read_text()
    text = text.replace("    tracker.acknowledge_corruptible(scratch)", "    pass")
    script = write_script("unacknowledged.py", text)
    out = tmp_path / "unack.db"
    rec = run_ttrecord(["run", "--backend", "emulator", "-o", str(out), str(script)], cwd=tmp_path,
                       env_extra=TRACKING)  # fmt: skip
    # THEN the program dies on the tracker's error at execute_trace, recorded on that call
    assert rec.returncode != 0
    assert "still alive before trace replay" in rec.stderr
    with sqlite3.connect(out) as conn:
        raised = conn.execute("SELECT name, error FROM events WHERE status = 'raised'").fetchall()
    assert [name for name, _ in raised] == ["execute_trace"]
    assert raised[0][1].startswith("RuntimeError: Found 1 device buffer(s) still alive")
    check = run_ttrecord(["check", str(out), "--format", "json"], cwd=tmp_path)
    findings = json.loads(check.stdout)["findings"]
    # AND TR004 reports the buffer; the tracker refused the replay, so nothing was overwritten
    # in this run and the finding is latent (info), saying so
    (f,) = [f for f in findings if f["id"] == "TR004"]
    assert f["severity"] == "info" and "raised" in f["evidence"]["latent"]["why"]


def _env() -> dict[str, str]:
    import os

    return {k: v for k, v in os.environ.items() if k != "TTRECORD_EMULATOR_FAULT"}


def _classmethod_body(ttnn):
    tracker = ttnn.tools.trace_allocation_tracker
    device = ttnn.open_device(device_id=0, trace_region_size=800768)
    a = _tensor(ttnn, device, 1.0)
    tracker.TraceAllocationTracker.acknowledge_corruptible(a)
    assert isinstance(tracker.TraceAllocationTracker(), tracker.TraceAllocationTracker)
    ttnn.close_device(device)


def test_classmethod_acknowledgement_is_recorded_as_the_function_form(tmp_path):
    events = record_inprocess(emulator, _classmethod_body, tmp_path)
    allocs = [e for e in events if e.kind is Kind.ALLOC]
    (ack,) = [e for e in events if e.name.endswith("acknowledge_corruptible")]
    assert ack.name.endswith("TraceAllocationTracker.acknowledge_corruptible")
    assert ack.kind is Kind.OP and ack.parent is None
    assert [_where(r.buffer) for r in ack.inputs] == [_where(allocs[0].buffer)]
