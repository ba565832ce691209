"""Two live traces whose dynamic trace buffers collide (TR010), as ttnn before 0.76 let them.

What it shows: with trace_region_size=0 each trace's command buffer is placed top-down in DRAM
by end_trace_capture (tt-metal PR #36999). Here DRAM is nearly full (a KV cache sized to the
free memory), so the second trace's command buffer lands in the first trace's freed
intermediate: every replay of the first trace writes that intermediate, so it overwrites the
second trace's commands, and replaying the second trace then runs garbage or hangs (tt-metal
#48869). ttnn 0.76 and later refuse the second capture ("overlaps with DRAM activity captured
by another live trace", TR016); this sample runs the emulator as a release before that check
(`TTRECORD_EMULATOR_RELEASE=0.75.0`), where nothing is raised. ttrecord reports the collision
at the second trace's end_trace_capture, naming the first trace's op whose memory it is.
Fix: a non-zero trace_region_size, free DRAM above the captures, or release the first trace
before capturing the second.
"""

import os

import torch

os.environ.setdefault("TTRECORD_EMULATOR_RELEASE", "0.75.0")  # the emulator only: a release before #50503
try:
    import ttnn
except ImportError:  # no ttnn installed: use ttrecord's hardware-free emulator
    from ttrecord import emulator as ttnn

TILE_BYTES = 2048  # one 32x32 bf16 tile: 2048 B per DRAM bank


def step(x, w):
    h = ttnn.add(x, w)  # the intermediate: freed inside the capture
    return ttnn.multiply(h, 0.5)


def norm(x):
    return ttnn.relu(x, memory_config=ttnn.L1_MEMORY_CONFIG)  # works in L1: no DRAM activity


def kv_cache_filling_dram(device, keep):
    """A KV cache sized to the DRAM left free, minus `keep` bytes per bank (rows of 64 B)."""
    config = getattr(device, "config", None)  # the emulator's p150 geometry; a p150 otherwise
    banks = getattr(config, "num_dram_banks", 8)
    top = getattr(config, "dram_bank_size", 4_278_190_080)
    binaries = 4 * TILE_BYTES  # the four programs (the L1 copy too), loaded top-down
    free_from = 1_048_704 + 2 * TILE_BYTES  # after x and w
    per_bank = top - binaries - keep - free_from
    return ttnn.allocate_tensor_on_device(ttnn.Shape([per_bank // 64 * banks, 32]), ttnn.bfloat16,
                                          ttnn.ROW_MAJOR_LAYOUT, device)


def main():
    device = ttnn.open_device(device_id=0, trace_region_size=0)
    x = ttnn.from_torch(torch.full((32, 32), 1.0), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    w = ttnn.from_torch(torch.full((32, 32), 2.0), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    small = ttnn.to_memory_config(x, ttnn.L1_MEMORY_CONFIG)
    step(x, w)  # warm-ups
    norm(small)
    kv = kv_cache_filling_dram(device, keep=2 * TILE_BYTES + 1024)  # the step and one trace buffer

    decode = ttnn.begin_trace_capture(device, cq_id=0)
    out = step(x, w)
    ttnn.end_trace_capture(device, decode, cq_id=0)

    post = ttnn.begin_trace_capture(device, cq_id=0)
    normed = norm(small)
    ttnn.end_trace_capture(device, post, cq_id=0)  # expect: TR010

    for _ in range(2):
        ttnn.execute_trace(device, decode, cq_id=0, blocking=True)  # writes over post's commands
        ttnn.execute_trace(device, post, cq_id=0, blocking=True)
    print(f"out: {ttnn.to_torch(out)[0, 0].item()}, normed: {ttnn.to_torch(normed)[0, 0].item()}")
    ttnn.release_trace(device, post)
    ttnn.release_trace(device, decode)
    del kv
    ttnn.close_device(device)


if __name__ == "__main__":
    main()
