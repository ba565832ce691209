"""Device synchronization inside a trace capture (TR003): ends in real ttnn's TT_FATAL.

What it shows: a `synchronize_device` left in a step function (often added
for timing or debugging) that is then captured. Synchronizing waits for an event
from the device, and nothing executes during capture, so real ttnn aborts with
`TT_FATAL ... Event Synchronization is not supported during trace capture.`
(ttnn's own per-op report database breaks capture the same way).
Fix: synchronize outside the captured region, e.g. after `execute_trace`.
"""

import time

import torch

try:
    import ttnn
except ImportError:  # no ttnn installed: use ttrecord's hardware-free emulator
    from ttrecord import emulator as ttnn


def timed_step(device, x, w):
    start = time.perf_counter()
    out = ttnn.silu(ttnn.matmul(x, w))
    ttnn.synchronize_device(device)  # expect: TR003
    print(f"step took {1e3 * (time.perf_counter() - start):.2f} ms")
    return out


def main():
    device = ttnn.open_device(device_id=0, trace_region_size=800768)
    x = ttnn.from_torch(torch.randn(32, 32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    w = ttnn.from_torch(torch.randn(32, 32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    timed_step(device, x, w)  # prep run
    trace_id = ttnn.begin_trace_capture(device, cq_id=0)
    out = timed_step(device, x, w)
    ttnn.end_trace_capture(device, trace_id, cq_id=0)
    ttnn.execute_trace(device, trace_id, cq_id=0)
    print(ttnn.to_torch(out))


if __name__ == "__main__":
    main()
