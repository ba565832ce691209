"""Tensors made while a trace exists, dropped and re-made: under `ttrecord run --verify-replay`
the recorder holds them for replay verification and must let each go where the program does.
The trace is empty (an op inside a capture segfaults the mock device) and never replayed.
Prints one SEQ line of JSON: [label, buffer_address()] per step."""
import gc
import json
import os
import numpy as np
if os.environ.get("RTTNN_DIRECT_EMULATOR") == "1":
    import ttrecord.emulator as ttnn
else:
    import ttnn
seq = []
def note(label, t):
    seq.append([label, t.buffer_address()]); return t
def mk(shape=(32, 32), mem=ttnn.DRAM_MEMORY_CONFIG):
    return ttnn.Tensor(np.zeros(shape, dtype=np.float32), ttnn.bfloat16, dev, ttnn.TILE_LAYOUT, mem)
dev = ttnn.open_device(device_id=0, trace_region_size=1 << 20)
x = note("x", mk())
tid = ttnn.begin_trace_capture(dev, cq_id=0)
ttnn.end_trace_capture(dev, tid, cq_id=0)
a = note("a after capture", mk())
b = note("b = add(a, x)", ttnn.add(a, x))
del a
c = note("c after del a", mk())
ttnn.deallocate(b)
d = note("d after deallocate(b)", mk((64, 64)))
e = note("e = multiply(c, x)", ttnn.multiply(c, x))
del c, e
gc.collect()
f = note("f after del c, e", mk((64, 32)))
l1 = note("l1 L1", mk(mem=ttnn.L1_MEMORY_CONFIG))
del l1
l2 = note("l2 L1 after del l1", mk(mem=ttnn.L1_MEMORY_CONFIG))
ttnn.release_trace(dev, tid)
g = note("g after release_trace", mk())
print("SEQ " + json.dumps({"seq": seq}))
ttnn.close_device(dev)
