"""One allocation script for the real allocator and the emulator: DRAM and L1, op outputs,
explicit deallocate, garbage-collected frees and reuse. Prints one SEQ line of JSON:
[label, buffer_address(), buffer_num_pages(), buffer_page_size()] per step and the allocator's live buffers at the end.
RTTNN_DIRECT_EMULATOR=1 imports ttrecord.emulator as ttnn (no recorder);
RTTNN_WITH_ROW_MAJOR=1 appends ROW_MAJOR allocations made by the Tensor constructor."""
import gc
import json
import os
import numpy as np
if os.environ.get("RTTNN_DIRECT_EMULATOR") == "1":
    import ttrecord.emulator as ttnn
else:
    import ttnn
DRAM, L1 = ttnn.DRAM_MEMORY_CONFIG, ttnn.L1_MEMORY_CONFIG
seq = []
def note(label, t):
    seq.append([label, t.buffer_address(), t.buffer_num_pages(), t.buffer_page_size()]); return t
def mk(shape, mem=DRAM, dtype=None, layout=None):
    return ttnn.Tensor(np.zeros(shape, dtype=np.float32), dtype or ttnn.bfloat16, dev, layout or ttnn.TILE_LAYOUT, mem)
dev = ttnn.open_device(device_id=0, trace_region_size=1 << 20)
a = note("a DRAM 32x32", mk((32, 32)))
b = note("b DRAM 32x32", mk((32, 32)))
c = note("c = add(a, b)", ttnn.add(a, b))
x = note("x DRAM 64x64", mk((64, 64)))
m = note("m = matmul(x, x)", ttnn.matmul(x, x))
s = note("s = softmax(a)", ttnn.softmax(a, dim=-1))
ttnn.deallocate(c)
d = note("d = multiply(a, b) after deallocate(c)", ttnn.multiply(a, b))
big = note("big DRAM 1024x1024", mk((1024, 1024)))
del big; gc.collect()
h1 = note("h1 DRAM 512x512 after del big", mk((512, 512)))
h2 = note("h2 DRAM 512x512", mk((512, 512)))
l1a = note("l1a L1 32x32", mk((32, 32), L1))
l1b = note("l1b = add(l1a, l1a, L1)", ttnn.add(l1a, l1a, memory_config=L1))
l1c = note("l1c L1 64x64", mk((64, 64), L1))
del l1a; gc.collect()
l1d = note("l1d L1 32x32 after del l1a", mk((32, 32), L1))
ttnn.deallocate(l1c)
l1e = note("l1e L1 32x32 after deallocate(l1c)", mk((32, 32), L1))
f32 = note("f32 DRAM 32x32 float32", mk((32, 32), dtype=ttnn.float32))
tl = note("tl = to_layout(a, ROW_MAJOR)", ttnn.to_layout(a, ttnn.ROW_MAJOR_LAYOUT))
del a; gc.collect()
e = note("e DRAM 32x32 after del a", mk((32, 32)))
if os.environ.get("RTTNN_WITH_ROW_MAJOR") == "1":
    # host ROW_MAJOR tensors put on device: one page per row (known emulator difference)
    rm = note("rm DRAM 32x64 ROW_MAJOR", mk((32, 64), layout=ttnn.ROW_MAJOR_LAYOUT))
    rm2 = note("rm2 L1 32x64 ROW_MAJOR", mk((32, 64), L1, layout=ttnn.ROW_MAJOR_LAYOUT))
    after = note("after DRAM 32x32", mk((32, 32)))
buffers = sorted([b_.address, b_.max_size_per_bank, str(b_.buffer_type).split(".")[-1]] for b_ in ttnn._ttnn.reports.get_buffers([dev]))
print("SEQ " + json.dumps({"seq": seq, "buffers": buffers}))
ttnn.close_device(dev)
