"""A first `gelu` after a capture, while the trace is live: a compile (the program cache grows)
with a trace live. The mock device segfaults on ops inside a capture, so the capture holds one
synchronize_device; the compile happens after end_trace_capture."""
import numpy as np
import ttnn

dev = ttnn.open_device(device_id=0, trace_region_size=1 << 20)
a = ttnn.Tensor(np.zeros((32, 32), dtype=np.float32), ttnn.bfloat16, dev, ttnn.TILE_LAYOUT,
                ttnn.DRAM_MEMORY_CONFIG)
warm = ttnn.relu(a)  # MARK:eager_relu
tid = ttnn.begin_trace_capture(dev, cq_id=0)
ttnn.synchronize_device(dev)
ttnn.end_trace_capture(dev, tid, cq_id=0)
again = ttnn.relu(a)  # MARK:cached_relu
new = ttnn.gelu(a)  # MARK:first_gelu
ttnn.release_trace(dev, tid)
later = ttnn.exp(a)  # MARK:after_release
print("entries", dev.num_program_cache_entries())
ttnn.close_device(dev)
