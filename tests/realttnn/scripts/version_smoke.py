"""The smoke script every ttnn release's lane records: written to run on each tested release.

Tensors come from a Python list when the release cannot read a numpy array without torch
(0.66.0). Exercises what the rules read: op calls and their tensors, allocations and frees,
a read inside a capture (the real ttnn raises, caught here), trace begin/end/release and the
trace buffer, the program cache, an allocation while a trace is alive, and an audit region
(`step`, recorded with --audit-region version_smoke.step) that reads a device tensor.
"""
import numpy as np
import ttnn


def mk(dev, shape=(32, 32), mem=None):
    mem = mem or ttnn.DRAM_MEMORY_CONFIG
    try:
        return ttnn.Tensor(np.zeros(shape, dtype=np.float32), ttnn.bfloat16, dev, ttnn.TILE_LAYOUT, mem)
    except Exception:  # 0.66.0: numpy needs torch (RuntimeError; SystemError when recorded)
        n = shape[0] * shape[1]
        return ttnn.Tensor([0.0] * n, list(shape), ttnn.bfloat16, ttnn.TILE_LAYOUT, dev, mem)


def step(x):
    y = ttnn.add(x, x)  # MARK:step_op
    y.cpu()  # MARK:step_read
    return y


dev = ttnn.open_device(device_id=0, trace_region_size=1 << 20)  # MARK:open
a = mk(dev)  # MARK:a
b = mk(dev, (64, 64))
l1 = mk(dev, mem=ttnn.L1_MEMORY_CONFIG)
c = ttnn.add(a, a)  # MARK:add
ttnn.deallocate(c)  # MARK:dealloc
step(a)
print("ADDRS", a.buffer_address(), b.buffer_address(), l1.buffer_address(), flush=True)
tid = ttnn.begin_trace_capture(dev, cq_id=0)  # MARK:begin
try:
    a.cpu()  # MARK:read
except RuntimeError as exc:
    print("CAUGHT", [ln for ln in str(exc).splitlines() if "trace capture" in ln][:1], flush=True)
ttnn.end_trace_capture(dev, tid, cq_id=0)  # MARK:end
late = mk(dev)  # MARK:late
ttnn.release_trace(dev, tid)  # MARK:release
ttnn.close_device(dev)
