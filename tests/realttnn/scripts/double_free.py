"""A tensor deallocated twice with force=True, then once more with ttnn.deallocate."""
import numpy as np
import ttnn

dev = ttnn.open_device(device_id=0, trace_region_size=1 << 20)
t = ttnn.Tensor(np.zeros((32, 32), dtype=np.float32), ttnn.bfloat16, dev, ttnn.TILE_LAYOUT,
                ttnn.DRAM_MEMORY_CONFIG)  # MARK:alloc
t.deallocate(force=True)  # MARK:first
t.deallocate(force=True)  # MARK:second
ttnn.deallocate(t)  # MARK:third
ttnn.close_device(dev)
