"""A Python scalar that changes per step is baked into the trace (TR007).

What it shows: a decode step scales its input by a per-step Python float
(a temperature schedule). Eagerly each step uses its own value, but a trace
records the op with the value it had during capture; replays cannot see the
Python variable change. The script prints the scale each replay should have used
next to the one it did use.
Fix: pass changing values as device tensors updated in place before each
replay, or capture one trace per value.
"""

import torch

try:
    import ttnn
except ImportError:  # no ttnn installed: use ttrecord's hardware-free emulator
    from ttrecord import emulator as ttnn


def step(x, temperature):
    return ttnn.multiply(x, 1.0 / temperature)  # expect: TR007 error


def main():
    device = ttnn.open_device(device_id=0, trace_region_size=800768)
    x = ttnn.from_torch(torch.full((32, 32), 1.0), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    schedule = [1.0, 2.0, 4.0, 8.0]

    for temperature in schedule[:2]:  # eager steps
        out = step(x, temperature)
        print(f"eager  temperature {temperature}: {ttnn.to_torch(out)[0, 0].item()}")

    trace_id = ttnn.begin_trace_capture(device, cq_id=0)
    out = step(x, schedule[2])
    ttnn.end_trace_capture(device, trace_id, cq_id=0)

    baked = False
    for temperature in schedule[2:]:
        ttnn.execute_trace(device, trace_id, cq_id=0, blocking=True)
        got = ttnn.to_torch(out)[0, 0].item()
        print(f"replay temperature {temperature}: {got} (expected {1.0 / temperature})")
        baked |= got != 1.0 / temperature
    print(f"baked value used: {baked}")
    ttnn.release_trace(device, trace_id)
    ttnn.close_device(device)


if __name__ == "__main__":
    main()
