"""Eager ops, an explicit deallocate, a garbage-collected free and reads, on numpy-built tensors."""
import gc

import numpy as np
import ttnn
from ttnn import multiply

dev = ttnn.open_device(device_id=0, trace_region_size=1 << 20)


def mk(shape=(32, 32)):
    return ttnn.Tensor(np.zeros(shape, dtype=np.float32), ttnn.bfloat16, dev, ttnn.TILE_LAYOUT,
                       ttnn.DRAM_MEMORY_CONFIG)


a = mk()  # MARK:alloc_a
b = mk()  # MARK:alloc_b
c = ttnn.add(a, b)  # MARK:add
ttnn.deallocate(c)  # MARK:deallocate
d = multiply(a, b)  # MARK:multiply
e = ttnn.softmax(d, dim=-1)  # MARK:softmax
del e  # MARK:gc_free
gc.collect()
f = mk((64, 64))  # MARK:alloc_f
host = d.cpu()  # MARK:cpu
values = host.to_list()  # MARK:to_list
print("ADDRS", a.buffer_address(), b.buffer_address(), d.buffer_address(), f.buffer_address())
ttnn.close_device(dev)
