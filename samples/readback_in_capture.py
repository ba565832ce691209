"""Readback inside a trace capture (TR001): ends in real ttnn's TT_FATAL.

What it shows: a debug print of an intermediate value left inside the captured
region. A trace records device commands only; reading device memory back to the
host needs the command queue to complete work and hand data back, which cannot
happen while commands are being recorded. Real ttnn aborts with
`TT_FATAL ... Reads are not supported during trace capture.` and so does this
script (the error is not caught: the program dies there, as it would on a card).
Fix: read outputs after `execute_trace`, or move the debug read out of the region.
"""

import torch

try:
    import ttnn
except ImportError:  # no ttnn installed: use ttrecord's hardware-free emulator
    from ttrecord import emulator as ttnn


def forward(x, w):
    h = ttnn.matmul(x, w)
    print("debug: mean activation", ttnn.to_torch(h).float().mean().item())  # expect: TR001
    return ttnn.relu(h)


def main():
    device = ttnn.open_device(device_id=0, trace_region_size=800768)
    x = ttnn.from_torch(torch.randn(32, 32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    w = ttnn.from_torch(torch.randn(32, 32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    forward(x, w)  # prep run: the read is fine outside a capture
    trace_id = ttnn.begin_trace_capture(device, cq_id=0)
    out = forward(x, w)
    ttnn.end_trace_capture(device, trace_id, cq_id=0)
    ttnn.execute_trace(device, trace_id, cq_id=0)
    print(ttnn.to_torch(out))


if __name__ == "__main__":
    main()
