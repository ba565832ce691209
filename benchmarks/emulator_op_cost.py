"""What one small emulator op costs: a 32x32 bf16 `ttnn.add` (CPU time of this thread, median of
rounds). The recording-overhead figures are measured against ops of this size, so they mean
something only while the op itself stays in the tens of microseconds (target: under 400 µs).
Run: python -m benchmarks.emulator_op_cost
"""

from __future__ import annotations

import json
import statistics
import time

TARGET_US = 400.0


def main() -> None:
    import torch

    from ttrecord import emulator as ttnn

    device = ttnn.open_device(device_id=0)
    try:
        a = ttnn.from_torch(torch.randn(32, 32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT,
                            device=device)  # fmt: skip
        for _ in range(50):  # warm-up
            ttnn.add(a, a)
        rounds = []
        for _ in range(7):
            start = time.thread_time_ns()
            for _ in range(500):
                ttnn.add(a, a)
            rounds.append((time.thread_time_ns() - start) / 500 / 1000.0)
    finally:
        ttnn.close_device(device)
    add_us = statistics.median(rounds)
    print(json.dumps({"benchmark": "emulator_op_cost", "add_32x32_bf16_us": round(add_us, 2),
                      "target_us": TARGET_US, "within_target": add_us <= TARGET_US}))  # fmt: skip


if __name__ == "__main__":
    main()
