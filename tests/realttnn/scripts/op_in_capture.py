"""An op inside a trace capture: on the mock device this segfaults inside ttnn."""
import numpy as np
import ttnn

dev = ttnn.open_device(device_id=0, trace_region_size=1 << 20)


def mk():
    return ttnn.Tensor(np.zeros((32, 32), dtype=np.float32), ttnn.bfloat16, dev, ttnn.TILE_LAYOUT,
                       ttnn.DRAM_MEMORY_CONFIG)


a, b = mk(), mk()
warm = ttnn.add(a, b)  # MARK:eager_add
tid = ttnn.begin_trace_capture(dev, cq_id=0)  # MARK:begin
out = ttnn.add(a, b)  # MARK:captured_add
print("unreachable on the mock device")
