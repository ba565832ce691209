"""A warm-up written as a copy of the captured statement, read back and freed before the capture.

Upstream: tenstorrent/tt-metal tests/ttnn/tracy/test_trace_runs.py@10eef64a495d517ea47db6460313eb39344b2ddc
(test_with_ops).
Changes:
  * the `device` fixture (device_params trace_region_size=1912832) -> ttnn.open_device(...) and
    close_device at the end; loop variables `i` -> `_`; `device.enable_async(True)` and `ttnn.enable_program_cache(device)`
    dropped (later ttnn removed async mode and keeps the program cache on; the emulator has
    neither call); m, k, n 1024 -> 256; 300 captured matmuls -> 4; 5 replays -> 2;
  * the warm-up matmul's output is kept as `warm`, read back with ttnn.to_torch (the eager
    result) and freed with ttnn.deallocate before begin_trace_capture (upstream drops it);
  * the last captured matmul's output is kept as `out` and read back after the replays; the
    traced result must equal the eager one and match torch (pcc >= 0.99), else exit 1.
"""

import sys

import torch

import ttnn

M = K = N = 256
ITERATIONS = 4
REPLAYS = 2


def pcc(a, b):
    a, b = a.double().flatten(), b.double().flatten()
    return torch.corrcoef(torch.stack([a, b]))[0, 1].item()


def main():
    device = ttnn.open_device(device_id=0, trace_region_size=1912832)

    torch.manual_seed(0)
    torch_a = torch.randn((M, K), dtype=torch.bfloat16)
    torch_b = torch.randn((K, N), dtype=torch.bfloat16)

    a = ttnn.from_torch(torch_a)
    b = ttnn.from_torch(torch_b)

    a = ttnn.to_device(a, device, memory_config=ttnn.L1_MEMORY_CONFIG)
    b = ttnn.to_device(b, device, memory_config=ttnn.L1_MEMORY_CONFIG)

    a = ttnn.to_layout(a, ttnn.TILE_LAYOUT)
    b = ttnn.to_layout(b, ttnn.TILE_LAYOUT)

    warm = ttnn.matmul(a, b, core_grid=ttnn.CoreGrid(y=8, x=8))
    eager = ttnn.to_torch(warm)
    ttnn.deallocate(warm)

    tid = ttnn.begin_trace_capture(device, cq_id=0)
    for _ in range(ITERATIONS):
        out = ttnn.matmul(a, b, core_grid=ttnn.CoreGrid(y=8, x=8))
    ttnn.end_trace_capture(device, tid, cq_id=0)

    for _ in range(REPLAYS):
        ttnn.execute_trace(device, tid, cq_id=0, blocking=True)
    traced = ttnn.to_torch(out)
    ttnn.release_trace(device, tid)
    ttnn.close_device(device)

    golden = torch_a.float() @ torch_b.float()
    print(f"eager vs torch pcc {pcc(eager, golden):.5f}; traced == eager: {torch.equal(traced, eager)}")
    if not torch.equal(traced, eager) or pcc(traced, golden) < 0.99:
        sys.exit(1)


if __name__ == "__main__":
    main()
