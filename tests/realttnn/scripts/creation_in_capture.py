"""One creation call (argv[1]) inside a capture on the mock device. Host writes and
allocations return (the mock accepts them); a device op segfaults, as every op does here."""
import sys

import ttnn

name = sys.argv[1] if len(sys.argv) > 1 else "zeros"
dev = ttnn.open_device(device_id=0, trace_region_size=1 << 20)
ref = ttnn.zeros((32, 32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=dev)
f = getattr(ttnn, name)
shaped = dict(dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=dev)
calls = {
    "zeros": lambda: f((32, 32), **shaped),  # MARK:create
    "ones": lambda: f((32, 32), **shaped),
    "empty": lambda: f((32, 32), **shaped),
    "full": lambda: f((32, 32), fill_value=2.0, **shaped),
    "arange": lambda: f(0, 32, 1, dtype=ttnn.bfloat16, device=dev),
    "rand": lambda: f((32, 32), **shaped),
    "randn": lambda: f((32, 32), **shaped),
    "zeros_like": lambda: f(ref),
    "ones_like": lambda: f(ref),
    "empty_like": lambda: f(ref),
    "full_like": lambda: f(ref, 2.0),
}
tid = ttnn.begin_trace_capture(dev, cq_id=0)
out = calls[name]()
print("RETURNED", name, ttnn.is_tensor_storage_on_device(out), flush=True)
ttnn.end_trace_capture(dev, tid, cq_id=0)
ttnn.release_trace(dev, tid)
ttnn.close_device(dev)
