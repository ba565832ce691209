"""A read inside a trace capture: the real ttnn raises TT_FATAL (caught here, then cleaned up)."""
import numpy as np
import ttnn

dev = ttnn.open_device(device_id=0, trace_region_size=1 << 20)
a = ttnn.Tensor(np.zeros((32, 32), dtype=np.float32), ttnn.bfloat16, dev, ttnn.TILE_LAYOUT,
                ttnn.DRAM_MEMORY_CONFIG)
tid = ttnn.begin_trace_capture(dev, cq_id=0)  # MARK:begin
try:
    a.cpu()  # MARK:read
except RuntimeError as exc:
    print("CAUGHT", str(exc).splitlines()[2])
ttnn.end_trace_capture(dev, tid, cq_id=0)  # MARK:end
ttnn.release_trace(dev, tid)
ttnn.close_device(dev)
