"""Replay outputs kept as handles are overwritten by the next replay (TR006).

What it shows: a loop that collects each step's output tensor and reads them all
at the end. Every replay writes the same captured output buffer, so the list
holds three handles to one buffer and every entry reads as the last step's
result. The script prints the three values it read next to the three it should
have seen.
Fix: read (or copy to another buffer) each output before the next execute_trace.
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
    x = ttnn.from_torch(torch.zeros(32, 32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    w = ttnn.from_torch(torch.full((32, 32), 100.0), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    out = model(x, w)  # prep run
    trace_id = ttnn.begin_trace_capture(device, cq_id=0)
    out = model(x, w)
    ttnn.end_trace_capture(device, trace_id, cq_id=0)

    outputs = []
    for step in range(3):
        host = ttnn.from_torch(torch.full((32, 32), float(step)), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
        ttnn.copy_host_to_device_tensor(host, x)
        ttnn.execute_trace(device, trace_id, cq_id=0, blocking=True)
        outputs.append(out)  # a handle to the trace's output buffer, not a copy

    values = [ttnn.to_torch(o)[0, 0].item() for o in outputs]  # expect: TR006 error
    expected = [100.0 + step for step in range(3)]
    print(f"read:     {values}")
    print(f"expected: {expected}")
    print(f"overwritten: {values != expected}")
    ttnn.release_trace(device, trace_id)
    ttnn.close_device(device)


if __name__ == "__main__":
    main()
