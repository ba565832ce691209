"""ttnn's trace allocation tracker opt-outs, imported the way model code does, while a trace is
live: one tensor acknowledged with `acknowledge_corruptible`, one allocated inside
`corruptible_allocation_scope`. The mock device segfaults on ops inside a capture, so the
capture holds one synchronize_device, and it segfaults in execute_trace, so the script prints
the tracker's own count of buffers it would raise on (`get_unsafe_tracked_ids`) instead."""
import numpy as np
import ttnn
from ttnn.tools.trace_allocation_tracker import acknowledge_corruptible, corruptible_allocation_scope


def tensor(dev):
    return ttnn.Tensor(np.zeros((32, 32), dtype=np.float32), ttnn.bfloat16, dev, ttnn.TILE_LAYOUT,
                       ttnn.DRAM_MEMORY_CONFIG)


dev = ttnn.open_device(device_id=0, trace_region_size=1 << 20)
tid = ttnn.begin_trace_capture(dev, cq_id=0)
ttnn.synchronize_device(dev)
ttnn.end_trace_capture(dev, tid, cq_id=0)
acked = tensor(dev)
acknowledge_corruptible(acked)  # MARK:acknowledge
with corruptible_allocation_scope(dev):  # MARK:scope
    scoped = tensor(dev)
print("tracked", len(ttnn._ttnn.operations.trace.get_unsafe_tracked_ids(dev, tid)))
ttnn.release_trace(dev, tid)
ttnn.close_device(dev)
