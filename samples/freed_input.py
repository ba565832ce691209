"""A captured input is freed and its address reused: replay reads garbage (TR005).

What it shows: the captured input `x` is deallocated after capture (it looked
unused to the Python code), and an unrelated scratch tensor (of another shape, so not a
replacement input of x's spec) is created. The allocator hands out x's freed
address again, so the next replay reads the scratch tensor's bytes as its input
and computes with them. The script prints the replayed result next to the
result of the input that was captured.
One mistake, one finding: the free, with the scratch tensor that landed on the
input's range folded under it as its consequence.
Fix: keep every captured input alive until the trace is released, and write
new data into it in place.
"""

import torch

try:
    import ttnn
except ImportError:  # no ttnn installed: use ttrecord's hardware-free emulator
    from ttrecord import emulator as ttnn


def model(x, w):
    return ttnn.add(x, w)


def main():
    device = ttnn.open_device(device_id=0, trace_region_size=800768)
    x = ttnn.from_torch(torch.full((32, 32), 1.0), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    w = ttnn.from_torch(torch.full((32, 32), 10.0), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    out = model(x, w)  # prep run
    trace_id = ttnn.begin_trace_capture(device, cq_id=0)
    out = model(x, w)
    ttnn.end_trace_capture(device, trace_id, cq_id=0)
    ttnn.execute_trace(device, trace_id, cq_id=0, blocking=True)
    expected = ttnn.to_torch(out)[0, 0].item()

    ttnn.deallocate(x)  # expect: TR005
    scratch = ttnn.from_torch(torch.full((32, 64), -100.0), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    ttnn.execute_trace(device, trace_id, cq_id=0, blocking=True)
    got = ttnn.to_torch(out)[0, 0].item()

    print(f"scratch landed on the freed input's address: {scratch.buffer_address()}")
    print(f"replay with the captured input: {expected}")
    print(f"replay after the input was freed: {got}")
    print(f"garbage: {got != expected}")
    ttnn.release_trace(device, trace_id)
    ttnn.close_device(device)


if __name__ == "__main__":
    main()
