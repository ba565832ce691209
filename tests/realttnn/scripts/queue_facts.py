"""Two-queue calls the recorder must read without touching the device: positional and keyword
cq ids, events recorded and waited for, a non-blocking readback. The mock device segfaults on
wait_for_event (its command queues are not set up), so the script ends there."""
import numpy as np
import ttnn

dev = ttnn.open_device(device_id=0, trace_region_size=1 << 20, num_command_queues=2)
t = ttnn.Tensor(np.zeros((32, 32), dtype=np.float32), ttnn.bfloat16, dev, ttnn.TILE_LAYOUT, ttnn.DRAM_MEMORY_CONFIG)
host = ttnn.Tensor(np.ones((32, 32), dtype=np.float32), ttnn.bfloat16, None, ttnn.TILE_LAYOUT)
ttnn.copy_host_to_device_tensor(host, t, cq_id=1)  # MARK:write
first = ttnn.record_event(dev, 1)  # MARK:record_positional
second = ttnn.record_event(dev, cq_id=0)  # MARK:record_keyword
out = t.cpu(False, 1)  # MARK:cpu_positional
ttnn.synchronize_device(dev, cq_id=1)  # MARK:sync_one
ttnn.event_synchronize(first)  # MARK:event_sync
ttnn.synchronize_device(dev)  # MARK:sync_all
print("recorded", flush=True)
ttnn.wait_for_event(0, first)  # MARK:wait
print("after wait", flush=True)
