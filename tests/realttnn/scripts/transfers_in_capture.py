"""Host writes, a host->device tensor and a sync inside a capture, and a trace never released.
The mock device accepts all of them silently (hardware would abort at the first); the
recorder must still see each one and `ttrecord check` must report it."""
import numpy as np
import ttnn

dev = ttnn.open_device(device_id=0, trace_region_size=1 << 20)
a = ttnn.Tensor(np.zeros((32, 32), dtype=np.float32), ttnn.bfloat16, dev, ttnn.TILE_LAYOUT,
                ttnn.DRAM_MEMORY_CONFIG)
host = ttnn.Tensor(np.ones((32, 32), dtype=np.float32), ttnn.bfloat16).to(ttnn.TILE_LAYOUT)
tid = ttnn.begin_trace_capture(dev, cq_id=0)  # MARK:begin
ttnn.copy_host_to_device_tensor(host, a)  # MARK:copy_h2d
b = ttnn.to_device(host, dev)  # MARK:to_device
ttnn.synchronize_device(dev)  # MARK:sync
ttnn.end_trace_capture(dev, tid, cq_id=0)  # MARK:end
t = a.cpu()  # MARK:read_after
print("DONE", b.buffer_address())
ttnn.close_device(dev)
