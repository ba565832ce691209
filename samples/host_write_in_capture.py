"""Host write inside a trace capture (TR002): ends in real ttnn's TT_FATAL.

What it shows: a step function that uploads its per-step input itself
(`copy_host_to_device_tensor`) and is then captured whole. A trace cannot
replay a host→device transfer (the data lives on the host), so real ttnn aborts
with `TT_FATAL ... Writes are not supported during trace capture. trace id: N`.
Fix: write the input into the captured input buffer *before* each
`execute_trace`, outside the captured region.
"""

import torch

try:
    import ttnn
except ImportError:  # no ttnn installed: use ttrecord's hardware-free emulator
    from ttrecord import emulator as ttnn


def step(host_input, x, w):
    ttnn.copy_host_to_device_tensor(host_input, x)  # expect: TR002
    return ttnn.gelu(ttnn.matmul(x, w))


def main():
    device = ttnn.open_device(device_id=0, trace_region_size=800768)
    x = ttnn.from_torch(torch.zeros(32, 32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    w = ttnn.from_torch(torch.randn(32, 32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    host_input = ttnn.from_torch(torch.randn(32, 32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
    step(host_input, x, w)  # prep run
    trace_id = ttnn.begin_trace_capture(device, cq_id=0)
    out = step(host_input, x, w)
    ttnn.end_trace_capture(device, trace_id, cq_id=0)
    ttnn.execute_trace(device, trace_id, cq_id=0)
    print(ttnn.to_torch(out))


if __name__ == "__main__":
    main()
