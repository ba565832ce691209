"""ttnn 0.81.1's command-queue and event API on a two-queue mock p150: one step per run
(`python queue_api.py STEP`), since several calls segfault on the mock device (its command
queues are not set up). Prints one RESULT line: ok, the type and repr of the result, or the
exception."""
import json
import sys

import numpy as np
import ttnn

dev = ttnn.open_device(device_id=0, trace_region_size=1 << 20, num_command_queues=2)
t = ttnn.Tensor(np.zeros((32, 32), dtype=np.float32), ttnn.bfloat16, dev, ttnn.TILE_LAYOUT, ttnn.DRAM_MEMORY_CONFIG)
host = ttnn.Tensor(np.ones((32, 32), dtype=np.float32), ttnn.bfloat16, None, ttnn.TILE_LAYOUT)


def in_capture(fn):
    tid = ttnn.begin_trace_capture(dev, cq_id=0)
    try:
        return fn()
    finally:
        ttnn.end_trace_capture(dev, tid, cq_id=0)
        ttnn.release_trace(dev, tid)


STEPS = {
    "record_event_positional": lambda: ttnn.record_event(dev, 0),
    "record_event_keyword": lambda: ttnn.record_event(dev, cq_id=1),
    "record_event_sub_device_ids": lambda: ttnn.record_event(dev, 1, sub_device_ids=[]),
    "record_event_twice": lambda: (ttnn.record_event(dev, 1), ttnn.record_event(dev, 1)),
    "record_event_bad_cq": lambda: ttnn.record_event(dev, 2),
    "wait_for_event_positional": lambda: ttnn.wait_for_event(0, ttnn.record_event(dev, 1)),
    "wait_for_event_keyword": lambda: ttnn.wait_for_event(cq_id=1, mesh_event=ttnn.record_event(dev, 0)),
    "event_synchronize": lambda: ttnn.event_synchronize(ttnn.record_event(dev, 1)),
    "copy_host_to_device_tensor_cq1": lambda: ttnn.copy_host_to_device_tensor(host, t, cq_id=1),
    "cpu_nonblocking_cq1": lambda: t.cpu(blocking=False, cq_id=1),
    "from_device_nonblocking": lambda: ttnn.from_device(t, blocking=False, cq_id=1),
    "to_torch_cq_id": lambda: ttnn.to_torch(t, cq_id=1),
    "synchronize_device_cq1": lambda: ttnn.synchronize_device(dev, cq_id=1),
    "synchronize_device_all": lambda: ttnn.synchronize_device(dev),
    "record_event_in_capture": lambda: in_capture(lambda: ttnn.record_event(dev, 0)),
}

step = sys.argv[1]
try:
    value = STEPS[step]()
except Exception as exc:  # noqa: BLE001 - what raises is the contract
    print("RESULT " + json.dumps({"step": step, "ok": False, "error": f"{type(exc).__name__}: {exc}"[:400]}), flush=True)
else:
    print("RESULT " + json.dumps({"step": step, "ok": True, "type": type(value).__name__, "repr": repr(value)[:300]}), flush=True)
ttnn.close_device(dev)
