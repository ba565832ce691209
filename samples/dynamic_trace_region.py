"""A dynamic trace region (trace_region_size=0) whose trace buffer has no room (TR016).

What it shows: with trace_region_size=0 ttnn keeps no trace region; end_trace_capture places
the trace's command buffer top-down in DRAM and requires it to sit above every DRAM address
the capture allocated or freed (and above each live trace's mark), tt-metal PRs #36999 and
#50503. Here a KV cache sized to the free DRAM leaves room only for the step's two tensors:
the trace buffer lands in the capture's freed intermediate, and end_trace_capture raises
"Trace buffer at address ... overlaps with DRAM activity during trace capture". The same
program with a fixed trace_region_size keeps its trace buffers out of DRAM's way.
The hazard is reported at open_device, where trace_region_size is chosen.
Fix: open the device with a non-zero trace_region_size, or leave DRAM free for the trace buffer.
"""

import torch

try:
    import ttnn
except ImportError:  # no ttnn installed: use ttrecord's hardware-free emulator
    from ttrecord import emulator as ttnn

TILE_BYTES = 2048  # one 32x32 bf16 tile; every buffer of this sample takes 2048 B per DRAM bank


def step(x, w):
    h = ttnn.add(x, w)  # the intermediate: freed inside the capture
    return ttnn.multiply(h, 0.5)


def kv_cache_filling_dram(device, keep):
    """A KV cache sized, like a serving engine's, to the DRAM left free, minus `keep` bytes per
    bank for activations (row-major rows of 64 B, so any size fits exactly)."""
    config = getattr(device, "config", None)  # the emulator's p150 geometry; a p150 otherwise
    banks = getattr(config, "num_dram_banks", 8)
    top = getattr(config, "dram_bank_size", 4_278_190_080)
    binaries = 2 * TILE_BYTES  # the step's two programs, loaded top-down by the warm-up
    free_from = 1_048_704 + 2 * TILE_BYTES  # after x and w
    per_bank = top - binaries - keep - free_from
    return ttnn.allocate_tensor_on_device(ttnn.Shape([per_bank // 64 * banks, 32]), ttnn.bfloat16,
                                          ttnn.ROW_MAJOR_LAYOUT, device)


def main():
    device = ttnn.open_device(device_id=0, trace_region_size=0)  # expect: TR016
    x = ttnn.from_torch(torch.full((32, 32), 1.0), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    w = ttnn.from_torch(torch.full((32, 32), 2.0), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    step(x, w)  # warm-up
    kv = kv_cache_filling_dram(device, keep=2 * TILE_BYTES)

    trace_id = ttnn.begin_trace_capture(device, cq_id=0)
    out = step(x, w)
    ttnn.end_trace_capture(device, trace_id, cq_id=0)  # raises: no room above the capture's DRAM

    ttnn.execute_trace(device, trace_id, cq_id=0, blocking=True)
    print(f"out: {ttnn.to_torch(out)[0, 0].item()}")
    ttnn.release_trace(device, trace_id)
    del kv
    ttnn.close_device(device)


if __name__ == "__main__":
    main()
