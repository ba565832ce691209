"""Two threads running ops on one device (no hazard).

What it shows: a recording that has to keep events from several threads apart.
Each thread creates its own tensors and runs a short chain of ops on the shared
device, then reads its result back. Each thread checks its result against torch
and the script prints both checks.
"""

import threading

import torch

try:
    import ttnn
except ImportError:  # no ttnn installed: use ttrecord's hardware-free emulator
    from ttrecord import emulator as ttnn


def worker(device, name, seed, results):
    torch.manual_seed(seed)
    a = torch.randn(32, 32)
    b = torch.randn(32, 32)
    ta = ttnn.from_torch(a, dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT, device=device)
    tb = ttnn.from_torch(b, dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT, device=device)
    for _ in range(5):
        ta = ttnn.relu(ttnn.add(ta, tb))
    expected = a
    for _ in range(5):
        expected = torch.relu(expected + b)
    results[name] = torch.allclose(ttnn.to_torch(ta), expected, atol=1e-4)


def main():
    device = ttnn.open_device(device_id=0)
    results = {}
    threads = [threading.Thread(target=worker, args=(device, f"worker-{i}", i, results), name=f"worker-{i}") for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for name in sorted(results):
        print(f"{name} matches torch: {results[name]}")
    ttnn.close_device(device)


if __name__ == "__main__":
    main()
