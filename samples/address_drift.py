"""Two captures of the same step whose buffer addresses drift.

What it shows: the same step captured twice (for example before and after a
model reload). With `--extra-alloc`, one extra tensor is allocated (and kept)
between the two captures, so the allocator places the second capture's output
and intermediates elsewhere: same ops, different baked-in addresses. Without the
flag the two captures use identical addresses. Record both runs and compare
them with `ttrecord diff` to see which buffers moved and why. No hazard: each
trace is released before the next capture.
"""

import argparse

import torch

try:
    import ttnn
except ImportError:  # no ttnn installed: use ttrecord's hardware-free emulator
    from ttrecord import emulator as ttnn


def step(x, w):
    hidden = ttnn.matmul(x, w)
    hidden = ttnn.gelu(hidden)
    return ttnn.add(hidden, x)


def capture(device, x, w):
    out = step(x, w)  # prep run
    trace_id = ttnn.begin_trace_capture(device, cq_id=0)
    out = step(x, w)
    ttnn.end_trace_capture(device, trace_id, cq_id=0)
    ttnn.execute_trace(device, trace_id, cq_id=0, blocking=True)
    return trace_id, out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--extra-alloc", action="store_true", help="allocate one more tensor before the second capture")
    args = parser.parse_args()

    device = ttnn.open_device(device_id=0, trace_region_size=800768)
    x = ttnn.from_torch(torch.randn(32, 64), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    w = ttnn.from_torch(torch.randn(64, 64) / 8, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)

    first, out = capture(device, x, w)
    first_address = out.buffer_address()
    ttnn.release_trace(device, first)
    del out

    extra = None
    if args.extra_alloc:
        extra = ttnn.from_torch(torch.zeros(64, 64), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)

    second, out = capture(device, x, w)
    print(f"extra allocation: {extra is not None}")
    print(f"capture 1 output address: {first_address}")
    print(f"capture 2 output address: {out.buffer_address()}")
    print(f"drifted: {out.buffer_address() != first_address}")
    ttnn.release_trace(device, second)
    ttnn.close_device(device)


if __name__ == "__main__":
    main()
