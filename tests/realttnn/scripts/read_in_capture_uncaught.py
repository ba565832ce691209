"""A read inside a trace capture that nobody catches: the program dies with the TT_FATAL."""
import numpy as np
import ttnn

dev = ttnn.open_device(device_id=0, trace_region_size=1 << 20)
a = ttnn.Tensor(np.zeros((32, 32), dtype=np.float32), ttnn.bfloat16, dev, ttnn.TILE_LAYOUT,
                ttnn.DRAM_MEMORY_CONFIG)
tid = ttnn.begin_trace_capture(dev, cq_id=0)
a.to_list()  # MARK:read
