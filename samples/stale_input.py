"""New input data put into a new tensor never reaches the trace (TR005).

What it shows: after capturing `out = model(x)`, the loop creates a fresh device
tensor for each new input and replays. The trace reads the buffer address of
the *captured* `x`, which still holds the first input, so every replay returns
the first input's result. No error, just stale output; the script prints the
replayed value next to the value the new input should give.
Fix: copy new data into the captured input (`ttnn.copy_host_to_device_tensor(
host, x)` or `ttnn.copy(new, x)`).
"""

import torch

try:
    import ttnn
except ImportError:  # no ttnn installed: use ttrecord's hardware-free emulator
    from ttrecord import emulator as ttnn


def model(x, w):
    return ttnn.matmul(x, w)


def main():
    device = ttnn.open_device(device_id=0, trace_region_size=800768)
    w = ttnn.from_torch(torch.eye(32) * 2, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    x = ttnn.from_torch(torch.full((32, 32), 1.0), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    out = model(x, w)  # prep run
    trace_id = ttnn.begin_trace_capture(device, cq_id=0)
    out = model(x, w)
    ttnn.end_trace_capture(device, trace_id, cq_id=0)

    stale = False
    for value in (3.0, 4.0):
        x_new = ttnn.from_torch(torch.full((32, 32), value), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)  # expect: TR005
        ttnn.execute_trace(device, trace_id, cq_id=0, blocking=True)
        got = ttnn.to_torch(out)[0, 0].item()
        print(f"input {value}: replay gives {got}, expected {2 * value}")
        stale |= got != 2 * value
        del x_new
    print(f"stale output: {stale}")
    ttnn.release_trace(device, trace_id)
    ttnn.close_device(device)


if __name__ == "__main__":
    main()
