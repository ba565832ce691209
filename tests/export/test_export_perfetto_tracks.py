"""Rule: each device is a process and each command queue a thread, so (device, cq) is one track."""

from export_helpers import check_trace
from ttrecord.events import Kind
from ttrecord.export import perfetto
from ttrecord.store.reader import Session
from ttrecord.testing import SessionBuilder


def test_one_named_track_per_device_and_command_queue(tmp_path):
    # GIVEN ops on device 0 queues 0 and 1, on device 1, and a host-only call
    b = SessionBuilder()
    b.open_device()
    x = b.alloc(1048704)
    b.op("ttnn.add", [x], [x], line=3, cq=0)
    b.op("ttnn.mul", [x], [x], line=4, cq=1)
    b.op("ttnn.exp", [], [], line=5, device=1)
    b._add(Kind.OP, "ttnn.reshape", 6, device=None)
    path = b.write(tmp_path / "s.db")
    # WHEN exported
    with Session.open(path) as s:
        trace = perfetto.build(s)
    events = trace["traceEvents"]
    processes = {e["pid"]: e["args"]["name"] for e in events if e["name"] == "process_name"}
    threads = {(e["pid"], e["tid"]): e["args"]["name"] for e in events if e["name"] == "thread_name"}
    where = {e["name"]: (processes[e["pid"]], threads[(e["pid"], e["tid"])])
             for e in events if e["ph"] == "X"}  # fmt: skip
    # THEN each call sits on its device's process and its queue's thread
    assert where["ttnn.add"] == ("device 0 (blackhole)", "CQ 0")
    assert where["ttnn.mul"] == ("device 0 (blackhole)", "CQ 1")
    assert where["ttnn.exp"] == ("device 1", "CQ 0")
    assert where["ttnn.reshape"] == ("host (Python)", "Python")
    assert check_trace(trace) == []
