"""Frees by reference drop on the real allocator with many live buffers: a tensor dropped
between two ops, a buffer kept alive by a view (reshape) after its first tensor goes, and an
L1 height-sharded tensor (its bank-local footprint). Prints one SEQ line of JSON."""
import json
import numpy as np
import ttnn
dev = ttnn.open_device(device_id=0, trace_region_size=1 << 20)
def mk(v=0.0):
    return ttnn.Tensor(np.full((32, 32), v, dtype=np.float32), ttnn.bfloat16, dev, ttnn.TILE_LAYOUT, ttnn.DRAM_MEMORY_CONFIG)
weights = [mk() for _ in range(1000)]
a = mk(1.0)
doomed = ttnn.relu(a)
out = {"doomed": doomed.buffer_address()}
del doomed  # MARK:drop
b = ttnn.relu(a)  # MARK:after_drop
base = ttnn.relu(b)
view = ttnn.reshape(base, (1, 1, 32, 32))
out["viewed"] = base.buffer_address()
del base  # the view still holds the buffer
c = ttnn.relu(b)  # MARK:view_alive
del view
d = ttnn.relu(b)  # MARK:view_gone
x = ttnn.Tensor(np.zeros((128, 64), dtype=np.float32), ttnn.bfloat16, dev, ttnn.TILE_LAYOUT)
sharded = ttnn.to_memory_config(x, ttnn.MemoryConfig(ttnn.TensorMemoryLayout.HEIGHT_SHARDED, ttnn.BufferType.L1, ttnn.ShardSpec(ttnn.CoreRangeSet({ttnn.CoreRange(ttnn.CoreCoord(0, 0), ttnn.CoreCoord(3, 0))}), [32, 64], ttnn.ShardOrientation.ROW_MAJOR)))  # MARK:sharded
out["sharded"] = sharded.buffer_address()
print("SEQ " + json.dumps(out))
ttnn.close_device(dev)
