"""A trace region too small for the second trace (TR016).

What it shows: the device is opened with trace_region_size=32768 (4096 B per DRAM bank).
The prefill trace (6 ops) fits; capturing the decode trace while the prefill trace is still
live needs more than the region holds, and end_trace_capture raises ttnn's
"Creating trace buffers of size 36864B on MeshDevice 1, but only 32768B is allocated for
trace region." (the mesh id is the emulator's). The run ends there, as a real one does.
Nothing is corrupted: the failure is loud, but it shows only at capture time.
The hazard is reported at open_device, where trace_region_size is set.
Fix: open the device with a larger trace_region_size, or release the prefill trace first.
"""

import torch

try:
    import ttnn
except ImportError:  # no ttnn installed: use ttrecord's hardware-free emulator
    from ttrecord import emulator as ttnn


def prefill(x, w):
    h = ttnn.add(x, w)
    h = ttnn.multiply(h, 0.5)
    h = ttnn.relu(h)
    h = ttnn.add(h, w)
    h = ttnn.multiply(h, 2.0)
    return ttnn.relu(h)


def decode(x, w):
    return ttnn.relu(ttnn.multiply(ttnn.add(x, w), 0.5))


def main():
    device = ttnn.open_device(device_id=0, trace_region_size=32768)  # expect: TR016
    x = ttnn.from_torch(torch.full((32, 32), 1.0), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    w = ttnn.from_torch(torch.full((32, 32), 2.0), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    prefill(x, w)  # prep runs
    decode(x, w)

    prefill_trace = ttnn.begin_trace_capture(device, cq_id=0)
    prefill_out = prefill(x, w)
    ttnn.end_trace_capture(device, prefill_trace, cq_id=0)

    decode_trace = ttnn.begin_trace_capture(device, cq_id=0)
    decode_out = decode(x, w)
    ttnn.end_trace_capture(device, decode_trace, cq_id=0)  # raises: the region is full

    ttnn.execute_trace(device, prefill_trace, cq_id=0, blocking=True)
    ttnn.execute_trace(device, decode_trace, cq_id=0, blocking=True)
    print(f"prefill: {ttnn.to_torch(prefill_out)[0, 0].item()}, decode: {ttnn.to_torch(decode_out)[0, 0].item()}")
    ttnn.release_trace(device, decode_trace)
    ttnn.release_trace(device, prefill_trace)
    ttnn.close_device(device)


if __name__ == "__main__":
    main()
