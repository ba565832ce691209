"""A sharded tensor allocated after capture at a trace's freed L1 address, on other cores:
no error or warning.

What it shows: overlap on sharded memory is decided by placement, not by address alone. The
captured step writes an intermediate height-sharded over cores (0,0)-(3,0); the capture frees
it, and a tensor sharded over cores (0,1)-(3,1) made after the capture lands on the same L1
address (the allocator reserves a sharded buffer's range in every bank). Each replay writes
the intermediate again, but only on the cores of row 0, so the new tensor on row 1 keeps its
values: the script prints them before and after the replay, unchanged. With `--same-cores` the
new tensor is sharded over row 0 too, and the replay overwrites it (TR004, as in
alloc_after_capture.py). Row 1 is safe by placement alone, so it is a latent note (TR004 info):
made before the capture, or on a grid the trace does not use by construction, it would be safe
whatever the allocator does.
"""

import sys

import torch

try:
    import ttnn
except ImportError:  # no ttnn installed: use ttrecord's hardware-free emulator
    from ttrecord import emulator as ttnn

ROWS, WIDTH = 128, 64  # four shards of 32 rows, one per core


def sharded_on_row(y):
    grid = ttnn.CoreRangeSet({ttnn.CoreRange(ttnn.CoreCoord(0, y), ttnn.CoreCoord(3, y))})
    spec = ttnn.ShardSpec(grid, [ROWS // 4, WIDTH], ttnn.ShardOrientation.ROW_MAJOR)
    return ttnn.MemoryConfig(ttnn.TensorMemoryLayout.HEIGHT_SHARDED, ttnn.BufferType.L1, spec)


def step(x):
    hidden = ttnn.relu(x, memory_config=sharded_on_row(0))  # intermediate: freed by the capture
    return ttnn.multiply(hidden, 0.5)


def main():
    row = 0 if "--same-cores" in sys.argv else 1
    device = ttnn.open_device(device_id=0, trace_region_size=800768)
    x = ttnn.from_torch(torch.full((ROWS, WIDTH), -3.0), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    out = step(x)  # prep run
    trace_id = ttnn.begin_trace_capture(device, cq_id=0)
    out = step(x)
    ttnn.end_trace_capture(device, trace_id, cq_id=0)

    staged = ttnn.from_torch(torch.full((ROWS, WIDTH), 7.0), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    other = ttnn.to_memory_config(staged, sharded_on_row(row))  # freed intermediate's address  # expect: TR004 info
    ttnn.deallocate(staged)
    before = ttnn.to_torch(other)[0, 0].item()
    ttnn.execute_trace(device, trace_id, cq_id=0, blocking=True)
    after = ttnn.to_torch(other)[0, 0].item()

    print(f"other: L1 {other.buffer_address():#x} on the cores of row {row}")
    print(f"value before the replay: {before}, after: {after}")
    print(f"corrupted: {after != before}")
    ttnn.release_trace(device, trace_id)
    ttnn.close_device(device)


if __name__ == "__main__":
    main()
