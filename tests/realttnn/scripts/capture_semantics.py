"""What each kind of call does inside a trace capture, on whichever backend runs it.
Prints one SEQ line of JSON {call: "ok" | first line of the error text}.
Never runs an op inside the capture (that segfaults the mock device).
RTTNN_DIRECT_EMULATOR=1 imports ttrecord.emulator as ttnn (no recorder)."""
import json
import os
import numpy as np
if os.environ.get("RTTNN_DIRECT_EMULATOR") == "1":
    import ttrecord.emulator as ttnn
else:
    import ttnn

dev = ttnn.open_device(device_id=0, trace_region_size=1 << 20)


def mk():
    return ttnn.Tensor(np.zeros((32, 32), dtype=np.float32), ttnn.bfloat16, dev, ttnn.TILE_LAYOUT,
                       ttnn.DRAM_MEMORY_CONFIG)


a = mk()
host = ttnn.Tensor(np.zeros((32, 32), dtype=np.float32), ttnn.bfloat16).to(ttnn.TILE_LAYOUT)
out = {}
calls = [
    ("Tensor.cpu", lambda: a.cpu()),
    ("Tensor.to_list", lambda: a.to_list()),
    ("ttnn.from_device", lambda: ttnn.from_device(a)),
    ("ttnn.copy_host_to_device_tensor", lambda: ttnn.copy_host_to_device_tensor(host, a)),
    ("ttnn.to_device", lambda: ttnn.to_device(host, dev)),
    ("ttnn.synchronize_device", lambda: ttnn.synchronize_device(dev)),
    ("ttnn.Tensor(numpy, device)", lambda: mk()),
    ("ttnn.allocate_tensor_on_device", lambda: ttnn.allocate_tensor_on_device(
        ttnn.Shape([32, 32]), ttnn.bfloat16, ttnn.TILE_LAYOUT, dev, ttnn.DRAM_MEMORY_CONFIG)),
]
for name, call in calls:
    tid = ttnn.begin_trace_capture(dev, cq_id=0)
    try:
        call()
        out[name] = "ok"
    except Exception as exc:
        lines = [l for l in str(exc).splitlines() if l.strip() and not l.startswith(("TT_FATAL @", "info:"))]
        out[name] = f"{type(exc).__name__}: {lines[0] if lines else exc}"
    ttnn.end_trace_capture(dev, tid, cq_id=0)
    ttnn.release_trace(dev, tid)
out["is_trace_capture_active_after"] = ttnn.is_trace_capture_active(dev)
print("SEQ " + json.dumps(out))
ttnn.close_device(dev)
