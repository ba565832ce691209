"""Ops that allocate and free a temporary inside the call (the allocator's snapshots between
calls cannot see it; a capture would bake its address into the trace). Prints one SEQ line:
per op the output address and shape, the get_buffers() difference across the call, and the
buffer_allocate/buffer_deallocate nodes of ttnn.graph capture. Without torch, real ttnn needs
ttnn.graph.disable_python_io_recording() right after begin_graph_capture (its Python I/O
recording imports torch inside every FastOperation call).
RTTNN_DIRECT_EMULATOR=1 imports ttrecord.emulator as ttnn."""
import gc
import json
import os
import numpy as np
if os.environ.get("RTTNN_DIRECT_EMULATOR") == "1":
    import ttrecord.emulator as ttnn
else:
    import ttnn

dev = ttnn.open_device(device_id=0, trace_region_size=1 << 20)
a = ttnn.Tensor(np.zeros((64, 64), dtype=np.float32), ttnn.bfloat16, dev, ttnn.TILE_LAYOUT,
                ttnn.DRAM_MEMORY_CONFIG)


def snap():
    return {(b.address, b.max_size_per_bank) for b in ttnn._ttnn.reports.get_buffers([dev])}


out = {}
for name, call in [("add", lambda: ttnn.add(a, a)), ("sum", lambda: ttnn.sum(a, dim=-1)),
                   ("mean", lambda: ttnn.mean(a, dim=-1))]:
    before = snap()
    ttnn.graph.begin_graph_capture(ttnn.graph.RunMode.NORMAL)
    if hasattr(ttnn.graph, "disable_python_io_recording"):
        ttnn.graph.disable_python_io_recording()
    r = call()
    buffer_nodes = [n for n in ttnn.graph.end_graph_capture()
                    if n["node_type"] in ("buffer_allocate", "buffer_deallocate")]
    nodes = [[n["node_type"], n["params"].get("address"), n["params"].get("max_size_per_bank")]
             for n in buffer_nodes]
    if buffer_nodes and "node_params" not in out:
        out["node_params"] = {k: [type(v).__name__, v] for k, v in sorted(buffer_nodes[0]["params"].items())}
    out[name] = {"address": r.buffer_address(), "shape": list(r.shape),
                 "new_buffers": sorted(snap() - before), "graph": nodes}
    del r
    gc.collect()
print("SEQ " + json.dumps(out))
ttnn.close_device(dev)
