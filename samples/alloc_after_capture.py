"""A buffer allocated after capture is overwritten by replay (TR004).

What it shows: the hazard real ttnn only warns about ("Allocating device buffers
is potentially unsafe due to the existence of an active trace"). The captured
step creates an intermediate (`hidden`); at the end of the capture it is freed,
but the trace still writes its address on every replay. A tensor created after
`end_trace_capture` lands on that freed address (the allocator reuses it first),
so the next `execute_trace` silently overwrites it. The script prints the
tensor's value before and after the replay: they differ, with no error.
Fix: allocate everything before the capture, or release the trace first.
"""

import torch

try:
    import ttnn
except ImportError:  # no ttnn installed: use ttrecord's hardware-free emulator
    from ttrecord import emulator as ttnn


def step(x, w):
    hidden = ttnn.add(x, w)  # intermediate: freed when step returns
    return ttnn.multiply(hidden, 0.5)


def main():
    device = ttnn.open_device(device_id=0, trace_region_size=800768)
    x = ttnn.from_torch(torch.full((32, 32), 3.0), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    w = ttnn.from_torch(torch.full((32, 32), 5.0), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    out = step(x, w)  # prep run
    trace_id = ttnn.begin_trace_capture(device, cq_id=0)
    out = step(x, w)
    ttnn.end_trace_capture(device, trace_id, cq_id=0)

    bias = ttnn.from_torch(torch.full((32, 32), 1.0), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)  # expect: TR004
    eager_value = ttnn.to_torch(bias)[0, 0].item()
    ttnn.execute_trace(device, trace_id, cq_id=0, blocking=True)
    replay_value = ttnn.to_torch(bias)[0, 0].item()

    print(f"bias buffer address: {bias.buffer_address()}")
    print(f"bias eager value:  {eager_value}")
    print(f"bias after replay: {replay_value}")
    print(f"corrupted: {replay_value != eager_value}")
    ttnn.release_trace(device, trace_id)
    ttnn.close_device(device)


if __name__ == "__main__":
    main()
