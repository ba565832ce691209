"""What the recorder keeps of a call for TR012 (recorder/queues.py): the queue, a non-blocking
flag and the event, from positional or keyword arguments, without touching the device."""

from __future__ import annotations

from ttrecord.recorder.queues import event_key, queue_facts


class MeshEvent:
    def __init__(self, cq: int) -> None:
        self.cq = cq

    def __repr__(self) -> str:
        return f"MeshEvent(id=0, device_id=1, mesh_cq_id={self.cq})"


def test_record_and_wait_name_the_same_event_by_serial_though_reprs_repeat():
    a, b = MeshEvent(1), MeshEvent(1)
    ka = queue_facts("ttnn.record_event", ("dev", 1), {}, a)
    kb = queue_facts("ttnn.record_event", ("dev",), {"cq_id": 1}, b)
    assert ka["cq"] == kb["cq"] == 1 and ka["event"] != kb["event"]
    assert queue_facts("ttnn.wait_for_event", (0, a), {}, None) == {"cq": 0, "event": ka["event"]}
    assert queue_facts("ttnn.wait_for_event", (), {"cq_id": 0, "mesh_event": b}, None)["event"] == kb["event"]
    assert queue_facts("ttnn.event_synchronize", (b,), {}, None) == {"event": kb["event"]}


def test_blocking_is_kept_only_when_false():
    assert queue_facts("Tensor.cpu", (False, 1), {}, None) == {"cq": 1, "blocking": False}
    assert queue_facts("Tensor.cpu", (), {}, None) is None
    assert queue_facts("ttnn.execute_trace", ("dev", 0), {"cq_id": 0, "blocking": False}, None) == {"cq": 0, "blocking": False}
    assert queue_facts("ttnn.execute_trace", ("dev", 0), {"cq_id": 0}, None) == {"cq": 0}
    assert queue_facts("ttnn.from_device", ("t", False), {"cq_id": 1}, None) == {"cq": 1, "blocking": False}


def test_positional_queue_of_writes_and_syncs():
    assert queue_facts("ttnn.copy_host_to_device_tensor", ("h", "d", 1), {}, None) == {"cq": 1}
    assert queue_facts("ttnn.synchronize_device", ("dev",), {}, None) is None
    assert queue_facts("ttnn.synchronize_device", ("dev", 1), {}, None) == {"cq": 1}
    assert queue_facts("ttnn.add", ("a", "b"), {"queue_id": 1}, None) == {"cq": 1}


def test_anything_that_is_not_an_event_has_no_key():
    assert event_key(object()) is None
    assert event_key(None) is None
