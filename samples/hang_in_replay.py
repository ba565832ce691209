"""A hang inside a trace replay: execute_trace never returns.

What it shows: how a recording copes with a program that stops making progress
inside native code (on hardware: a trace waiting on a corrupted semaphore or an
overwritten buffer). On the emulator the script asks for it: it sets
TTRECORD_EMULATOR_FAULT=hang@replay:2 before opening the device, so the second
execute_trace sleeps for an hour. Run it under a timeout (`ttrecord run
--timeout S` or `timeout S python ...`); the last line printed names the replay
that hung.
"""

import os

import torch

try:
    import ttnn
except ImportError:  # no ttnn installed: use ttrecord's hardware-free emulator
    from ttrecord import emulator as ttnn

if getattr(ttnn, "__emulator__", False):
    os.environ.setdefault("TTRECORD_EMULATOR_FAULT", "hang@replay:2")


def main():
    device = ttnn.open_device(device_id=0, trace_region_size=800768)
    x = ttnn.from_torch(torch.randn(32, 32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    out = ttnn.silu(x)  # prep run
    trace_id = ttnn.begin_trace_capture(device, cq_id=0)
    out = ttnn.silu(x)
    ttnn.end_trace_capture(device, trace_id, cq_id=0)
    for replay in range(1, 4):
        print(f"replay {replay}", flush=True)
        ttnn.execute_trace(device, trace_id, cq_id=0, blocking=True)
    print(ttnn.to_torch(out)[0, 0].item())
    ttnn.release_trace(device, trace_id)
    ttnn.close_device(device)


if __name__ == "__main__":
    main()
