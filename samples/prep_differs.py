"""The capture takes another path than its prep run (TR015).

What it shows: a step function with a first-token branch. The program is compiled once with
the branch taken, then the prep run right before the capture runs the step without it, and the
capture runs it with it. The captured `multiply` was never part of the prep run: its output
buffer is allocated for the first time inside the capture, and had its program not been
compiled earlier it would have compiled there (TR013). The emulator replays it correctly
(nothing is corrupted here); the finding is a warning about a warm-up that rehearsed another
path. It is reported at the first divergent call, aligned as `ttrecord diff --prep` aligns.
Fix: run the prep pass with the same arguments as the capture.
"""

import torch

try:
    import ttnn
except ImportError:  # no ttnn installed: use ttrecord's hardware-free emulator
    from ttrecord import emulator as ttnn


def step(x, w, first_token):
    h = ttnn.add(x, w)
    if first_token:
        h = ttnn.multiply(h, 2.0)  # expect: TR015
    return ttnn.relu(h)


def main():
    device = ttnn.open_device(device_id=0, trace_region_size=800768)
    x = ttnn.from_torch(torch.full((32, 32), 1.0), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    w = ttnn.from_torch(torch.full((32, 32), 2.0), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    step(x, w, first_token=True)  # compile run
    step(x, w, first_token=False)  # prep run: another path

    trace_id = ttnn.begin_trace_capture(device, cq_id=0)
    out = step(x, w, first_token=True)
    ttnn.end_trace_capture(device, trace_id, cq_id=0)
    ttnn.execute_trace(device, trace_id, cq_id=0, blocking=True)
    print(f"replay: {ttnn.to_torch(out)[0, 0].item()} (eager: 6.0)")
    ttnn.release_trace(device, trace_id)
    ttnn.close_device(device)


if __name__ == "__main__":
    main()
