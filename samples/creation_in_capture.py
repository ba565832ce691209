"""A creation call with a device inside a trace capture (TR002): a host write in disguise.

What it shows: a denoising step builds its timestep tensor with `ttnn.full(..., device=)` on
every call, as tt-metal's PI0 runner builds `ttnn.arange(..., device=)` inside its captured
loop. ttnn's creation calls (zeros, ones, full, empty, arange, rand and the `_like` forms) fill
the tensor on the host and write it to the device, so inside a capture real ttnn aborts with
`TT_FATAL ... Writes are not supported during trace capture. trace id: N` (tt-mlir #8173 hit
it from `ttnn::zeros`). The eager prep run works, which is why it surprises.
Fix: create the tensor once before the capture and update it with a copy before each replay.
"""

import torch

try:
    import ttnn
except ImportError:  # no ttnn installed: use ttrecord's hardware-free emulator
    from ttrecord import emulator as ttnn


def denoise_step(x, w, device, t):
    timestep = ttnn.full((32, 32), t, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)  # expect: TR002
    return ttnn.add(ttnn.matmul(x, w), timestep)


def main():
    device = ttnn.open_device(device_id=0, trace_region_size=800768)
    x = ttnn.from_torch(torch.ones(32, 32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    w = ttnn.from_torch(torch.eye(32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    denoise_step(x, w, device, 0.5)  # prep run
    trace_id = ttnn.begin_trace_capture(device, cq_id=0)
    out = denoise_step(x, w, device, 0.5)
    ttnn.end_trace_capture(device, trace_id, cq_id=0)
    ttnn.execute_trace(device, trace_id, cq_id=0)
    print(ttnn.to_torch(out)[0, 0].item())


if __name__ == "__main__":
    main()
