"""An incomplete warm-up: an op compiles inside the capture (TR013).

What it shows: the warm-up runs the decode step for a 32-row batch, but the capture runs it
on a 64-row batch. Every op of the step has a new program-cache key (the input shape differs),
so the first one compiles inside the capture. Compiling loads kernel binaries into DRAM, which
a capture cannot record: ttnn 0.81.1 (and the emulator) abort the call with
"TT_FATAL @ .../mesh_workload.cpp:200: !is_capturing_trace" "Cannot load new binaries during
trace capture.This program is not yet in program cache. ..." and the run ends there, as a
real one does. The hazard is reported at that op, naming the warm-up call that should have
compiled it and the key field that differs.
Fix: warm up with the shapes, dtypes, layouts and memory configs the capture uses.
"""

import torch

try:
    import ttnn
except ImportError:  # no ttnn installed: use ttrecord's hardware-free emulator
    from ttrecord import emulator as ttnn


def step(x, w):
    h = ttnn.add(x, w)  # expect: TR013
    return ttnn.relu(h)


def main():
    device = ttnn.open_device(device_id=0, trace_region_size=800768)
    w = ttnn.from_torch(torch.full((32, 32), 1.0), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    x_warm = ttnn.from_torch(torch.full((32, 32), 1.0), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    step(x_warm, w)  # warm-up with a 32-row batch
    w_big = ttnn.from_torch(torch.full((64, 32), 1.0), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    x = ttnn.from_torch(torch.full((64, 32), 2.0), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)

    trace_id = ttnn.begin_trace_capture(device, cq_id=0)
    out = step(x, w_big)  # the capture runs a 64-row batch: not warmed up
    ttnn.end_trace_capture(device, trace_id, cq_id=0)
    ttnn.execute_trace(device, trace_id, cq_id=0, blocking=True)
    print(f"replay: {ttnn.to_torch(out)[0, 0].item()} (eager: 3.0)")
    print(f"program cache entries: {device.num_program_cache_entries()}")
    ttnn.release_trace(device, trace_id)
    ttnn.close_device(device)


if __name__ == "__main__":
    main()
