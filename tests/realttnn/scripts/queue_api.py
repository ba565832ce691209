"""ttnn 0.81.1's command-queue and event API on a two-queue mock p150: which calls and
argument forms are accepted, what they return, what raises. One RESULT line per step."""
import json
import sys

import numpy as np
import ttnn


def emit(step, **kw):
    print("RESULT " + json.dumps({"step": step, **kw}), flush=True)


def attempt(step, fn):
    try:
        value = fn()
    except Exception as exc:  # noqa: BLE001 - the contract is what raises
        emit(step, ok=False, error=f"{type(exc).__name__}: {exc}"[:600])
        return None
    emit(step, ok=True, type=type(value).__name__, repr=repr(value)[:200])
    return value


dev = ttnn.open_device(device_id=0, trace_region_size=1 << 20, num_command_queues=2)  # MARK:open
t = ttnn.Tensor(np.zeros((32, 32), dtype=np.float32), ttnn.bfloat16, dev, ttnn.TILE_LAYOUT, ttnn.DRAM_MEMORY_CONFIG)
host = ttnn.Tensor(np.ones((32, 32), dtype=np.float32), ttnn.bfloat16, None, ttnn.TILE_LAYOUT)
e0 = attempt("record_event_positional", lambda: ttnn.record_event(dev, 0))  # MARK:record0
e1 = attempt("record_event_keyword", lambda: ttnn.record_event(dev, cq_id=1))  # MARK:record1
attempt("record_event_sub_device_ids", lambda: ttnn.record_event(dev, 1, sub_device_ids=[]))
attempt("record_event_bad_cq", lambda: ttnn.record_event(dev, 2))
attempt("wait_for_event_positional", lambda: ttnn.wait_for_event(0, e1))  # MARK:wait
attempt("wait_for_event_keyword", lambda: ttnn.wait_for_event(cq_id=1, mesh_event=e0))
attempt("copy_host_to_device_tensor_cq1", lambda: ttnn.copy_host_to_device_tensor(host, t, cq_id=1))  # MARK:write
attempt("copy_host_to_device_tensor_positional_cq", lambda: ttnn.copy_host_to_device_tensor(host, t, 1))
attempt("cpu_nonblocking_cq1", lambda: t.cpu(blocking=False, cq_id=1))  # MARK:cpu
attempt("cpu_positional", lambda: t.cpu(False, 1))
attempt("from_device_nonblocking", lambda: ttnn.from_device(t, blocking=False, cq_id=1))
attempt("to_torch_cq_id", lambda: ttnn.to_torch(t, cq_id=1) is not None)
attempt("synchronize_device_cq1", lambda: ttnn.synchronize_device(dev, cq_id=1))  # MARK:sync1
attempt("synchronize_device_all", lambda: ttnn.synchronize_device(dev))
attempt("event_synchronize", lambda: ttnn.event_synchronize(e1))  # MARK:event_sync
tid = ttnn.begin_trace_capture(dev, cq_id=0)
attempt("record_event_in_capture", lambda: ttnn.record_event(dev, 0))
attempt("wait_for_event_in_capture", lambda: ttnn.wait_for_event(0, e1))
attempt("event_synchronize_in_capture", lambda: ttnn.event_synchronize(e1))
attempt("synchronize_device_in_capture", lambda: ttnn.synchronize_device(dev))
ttnn.end_trace_capture(dev, tid, cq_id=0)
ttnn.release_trace(dev, tid)
ttnn.close_device(dev)
emit("closed", ok=True)
sys.exit(0)
