"""ttnn's trace allocation tracker opt-outs, imported the way model code does, while a trace is
live: one tensor acknowledged with `acknowledge_corruptible`, one allocated inside
`corruptible_allocation_scope`. The mock device segfaults on ops inside a capture, so the
capture holds one synchronize_device."""
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
acked = tensor(dev)  # MARK:acked_alloc
acknowledge_corruptible(acked)  # MARK:acknowledge
with corruptible_allocation_scope(dev):  # MARK:scope
    scoped = tensor(dev)  # MARK:scoped_alloc
ttnn.execute_trace(dev, tid, cq_id=0, blocking=True)
print("replayed")
ttnn.release_trace(dev, tid)
ttnn.close_device(dev)
