"""decoder.py with its `project` helper moved above `main`."""

import torch

try:
    import ttnn
except ImportError:  # no ttnn installed: use ttrecord's hardware-free emulator
    from ttrecord import emulator as ttnn


def project(x, wq, wk, wv):
    q = ttnn.matmul(x, wq)
    k = ttnn.matmul(x, wk)
    v = ttnn.matmul(x, wv)
    return q, k, v


def main():
    device = ttnn.open_device(device_id=0, trace_region_size=800768)

    def upload(t):
        return ttnn.from_torch(t, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)

    x = upload(torch.randn(32, 64))
    weights = [upload(torch.randn(64, 64) / 8) for _ in range(3)]
    out = step(x, weights)  # prep run
    trace_id = ttnn.begin_trace_capture(device, cq_id=0)
    out = step(x, weights)
    ttnn.end_trace_capture(device, trace_id, cq_id=0)
    ttnn.execute_trace(device, trace_id, cq_id=0, blocking=True)
    print(tuple(out.shape))
    ttnn.release_trace(device, trace_id)
    ttnn.close_device(device)


def step(x, weights):
    q, k, v = project(x, *weights)
    a = ttnn.relu(q)
    b = ttnn.gelu(k)
    return ttnn.add(ttnn.add(a, b), v)


if __name__ == "__main__":
    main()
