"""Where a trace's buffer lands: open_device(trace_region_size=N), capture one command, and
list the TRACE buffers get_buffers() reports after end_trace_capture and after release_trace.
The mock device segfaults on any op inside a capture, so on the real backend the one command
is a synchronize_device (which the mock accepts); on the emulator, which raises on a sync in
capture like hardware, it is one ttnn.add. An empty capture leaves no TRACE buffer on either.
Prints one SEQ line. RTTNN_DIRECT_EMULATOR=1 imports ttrecord.emulator as ttnn."""
import json
import os
import numpy as np
EMULATOR = os.environ.get("RTTNN_DIRECT_EMULATOR") == "1"
if EMULATOR:
    import ttrecord.emulator as ttnn
else:
    import ttnn

out = {}
for trs in (1 << 20, 8 << 20):
    dev = ttnn.open_device(device_id=0, trace_region_size=trs)

    def trace_buffers(dev=dev):
        return sorted([b.address, b.max_size_per_bank] for b in ttnn._ttnn.reports.get_buffers([dev])
                      if "TRACE" in str(b.buffer_type))

    a = ttnn.Tensor(np.zeros((32, 32), dtype=np.float32), ttnn.bfloat16, dev, ttnn.TILE_LAYOUT,
                    ttnn.DRAM_MEMORY_CONFIG)
    b = ttnn.add(a, a)
    empty = ttnn.begin_trace_capture(dev, cq_id=0)
    ttnn.end_trace_capture(dev, empty, cq_id=0)
    r = {"empty_capture": trace_buffers()}
    ttnn.release_trace(dev, empty)
    tid = ttnn.begin_trace_capture(dev, cq_id=0)
    if EMULATOR:
        ttnn.add(a, a, output_tensor=b)
    else:
        ttnn.synchronize_device(dev)
    ttnn.end_trace_capture(dev, tid, cq_id=0)
    r["after_end"] = trace_buffers()
    ttnn.release_trace(dev, tid)
    r["after_release"] = trace_buffers()
    out[str(trs)] = r
    del a, b
    ttnn.close_device(dev)
print("SEQ " + json.dumps(out))
