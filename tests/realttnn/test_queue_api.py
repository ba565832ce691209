"""ttnn 0.81.1's command-queue and event API on a two-queue mock p150 (what TR012 and the
emulator's queues rely on), and what the recorder keeps of it.

Pinned: record_event(device, cq[, sub_device_ids]) returns a MeshEvent whose repr carries
mesh_cq_id and an id that is 0 for every event on the mock (so the recorder numbers events
itself); cq_id 2 on a two-queue device raises mesh_device.cpp's "cq_id 2 is out of range";
copy_host_to_device_tensor(cq_id=1), Tensor.cpu(blocking=False, cq_id=1),
from_device(blocking=False, cq_id=1), synchronize_device(device[, cq_id]) and
event_synchronize(event) are accepted; wait_for_event segfaults on the mock device; and
record_event inside a capture is accepted there (the emulator raises, see docs/emulator.md).
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from realttnn_helpers import SCRIPTS, describe, events, marks, ttrecord_run


def step(name: str, tmp_path) -> tuple[int, dict | None]:
    proc = subprocess.run([sys.executable, str(SCRIPTS / "queue_api.py"), name], cwd=tmp_path,
                          capture_output=True, text=True, timeout=180)  # fmt: skip
    lines = [json.loads(x[len("RESULT "):]) for x in proc.stdout.splitlines() if x.startswith("RESULT ")]
    return proc.returncode, (lines[0] if lines else None)


@pytest.mark.parametrize("name", ["record_event_positional", "record_event_keyword", "record_event_sub_device_ids"])
def test_record_event_returns_a_mesh_event_naming_its_queue(name, tmp_path):
    code, result = step(name, tmp_path)
    assert code == 0 and result is not None and result["ok"], result
    assert result["type"] == "MeshEvent"
    cq = 0 if name == "record_event_positional" else 1
    assert f"mesh_cq_id={cq}," in result["repr"]
    assert result["repr"].startswith("MeshEvent(id=0, device_id=")  # id 0: no identity on the mock


def test_two_events_on_one_queue_print_the_same(tmp_path):
    code, result = step("record_event_twice", tmp_path)
    assert code == 0 and result["ok"]
    first, second = result["repr"][1:-1].split("), MeshEvent(")
    assert first + ")" == "MeshEvent(" + second


def test_a_queue_the_device_does_not_have_raises(tmp_path):
    code, result = step("record_event_bad_cq", tmp_path)
    assert code == 0 and not result["ok"]
    assert "cq_id 2 is out of range" in result["error"]
    assert "id < mesh_command_queues_.size()" in result["error"]


@pytest.mark.parametrize("name", ["copy_host_to_device_tensor_cq1", "synchronize_device_cq1",
                                  "synchronize_device_all", "event_synchronize"])  # fmt: skip
def test_queue_calls_are_accepted(name, tmp_path):
    code, result = step(name, tmp_path)
    assert code == 0 and result == {"step": name, "ok": True, "type": "NoneType", "repr": "None"}


@pytest.mark.parametrize("name", ["cpu_nonblocking_cq1", "from_device_nonblocking"])
def test_a_nonblocking_read_returns_a_host_tensor_at_once(name, tmp_path):
    code, result = step(name, tmp_path)
    assert code == 0 and result["ok"] and result["type"] == "Tensor"


@pytest.mark.parametrize("name", ["wait_for_event_positional", "wait_for_event_keyword"])
def test_wait_for_event_segfaults_on_the_mock_device(name, tmp_path):
    code, result = step(name, tmp_path)
    assert code == -11 and result is None


def test_record_event_inside_a_capture_is_accepted_on_the_mock(tmp_path):
    code, result = step("record_event_in_capture", tmp_path)
    assert code == 0 and result["ok"] and result["type"] == "MeshEvent"


def test_the_recorder_keeps_queue_blocking_flag_and_event_of_each_call(tmp_path):
    proc, db = ttrecord_run(sys.executable, "queue_facts.py", tmp_path)
    assert "recorded" in proc.stdout and "after wait" not in proc.stdout, describe(proc)
    m = marks("queue_facts.py")
    by_line = {e["cs_line"]: e for e in events(db, "e.parent IS NULL")}
    queue = {line: json.loads(by_line[line]["args"] or "{}").get("queue") for line in m.values() if line in by_line}
    assert queue[m["write"]] == {"cq": 1}
    first = queue[m["record_positional"]]
    assert first["cq"] == 1 and "mesh_cq_id=1," in first["event"]
    second = queue[m["record_keyword"]]
    assert second["cq"] == 0 and second["event"].split()[0] != first["event"].split()[0]  # own serials
    assert queue[m["cpu_positional"]] == {"cq": 1, "blocking": False}
    assert queue[m["sync_one"]] == {"cq": 1}
    assert queue[m["event_sync"]] == {"event": first["event"]}  # the same event, by its serial
    assert queue[m["sync_all"]] is None
    wait = by_line[m["wait"]]  # the call that died is still recorded (queue facts come at its end)
    assert wait["status"] == "died" and json.loads(wait["args"]) == {"0": 0}
