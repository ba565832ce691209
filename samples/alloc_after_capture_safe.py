"""Allocations after capture that cannot be overwritten: zero hazards expected.

A near miss of alloc_after_capture.py. The trace only touches DRAM buffers, so
  * a tensor allocated after the capture in L1 (a different address space) is
    never written by the replay, and
  * a DRAM tensor allocated after `release_trace` is safe because no trace
    exists any more.
Real ttnn still prints its generic "potentially unsafe" warning for the L1
allocation (it warns on every allocation while a trace exists); ttrecord can
tell that this one does not overlap anything the trace reads or writes.
The script prints that both values survive the replay.
"""

import torch

try:
    import ttnn
except ImportError:  # no ttnn installed: use ttrecord's hardware-free emulator
    from ttrecord import emulator as ttnn


def step(x, w):
    hidden = ttnn.add(x, w)
    return ttnn.multiply(hidden, 0.5)


def main():
    device = ttnn.open_device(device_id=0, trace_region_size=800768)
    x = ttnn.from_torch(torch.full((32, 32), 3.0), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    w = ttnn.from_torch(torch.full((32, 32), 5.0), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    out = step(x, w)  # prep run
    trace_id = ttnn.begin_trace_capture(device, cq_id=0)
    out = step(x, w)
    ttnn.end_trace_capture(device, trace_id, cq_id=0)

    in_l1 = ttnn.from_torch(
        torch.full((32, 32), 1.0),
        dtype=ttnn.bfloat16,
        layout=ttnn.TILE_LAYOUT,
        device=device,
        memory_config=ttnn.L1_MEMORY_CONFIG,
    )
    ttnn.execute_trace(device, trace_id, cq_id=0, blocking=True)
    l1_value = ttnn.to_torch(in_l1)[0, 0].item()
    result = ttnn.to_torch(out)[0, 0].item()
    ttnn.release_trace(device, trace_id)

    after_release = ttnn.from_torch(torch.full((32, 32), 2.0), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    dram_value = ttnn.to_torch(after_release)[0, 0].item()

    print(f"trace output: {result}")
    print(f"L1 tensor after replay: {l1_value} (expected 1.0)")
    print(f"DRAM tensor allocated after release: {dram_value} (expected 2.0)")
    print(f"intact: {l1_value == 1.0 and dram_value == 2.0}")
    ttnn.close_device(device)


if __name__ == "__main__":
    main()
