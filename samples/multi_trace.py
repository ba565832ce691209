"""Two live traces that share memory, each output read right after its own replay:
no result is corrupted, one info note (TR010).

What it shows: the shape of tt-metal's own multi-trace unit test. Trace A is
captured first and its intermediate is freed when the capture ends; trace B's
output then lands on that freed range. Both traces stay alive and are replayed
alternately with new inputs copied in. A's replay overwrites B's output range,
but the program reads B's output only after B's own replay, so every value read
is the one its trace just wrote. The script prints both traces' results next to
the expected ones.
The shared memory is reported as an info note at B's capture; it becomes an
error only when a value is read after the other trace overwrote it (see
overlapping_traces.py).
"""

import torch

try:
    import ttnn
except ImportError:  # no ttnn installed: use ttrecord's hardware-free emulator
    from ttrecord import emulator as ttnn


def model_a(x, w):
    hidden = ttnn.add(x, w)  # freed when model_a returns, still written by trace A
    return ttnn.multiply(hidden, 2.0)


def model_b(x):
    return ttnn.add(x, 1.0)


def host(value):
    return ttnn.from_torch(torch.full((32, 32), value), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)


def main():
    device = ttnn.open_device(device_id=0, trace_region_size=800768)
    x_a = ttnn.to_device(host(1.0), device)
    x_b = ttnn.to_device(host(1.0), device)
    w = ttnn.to_device(host(20.0), device)
    out_a = model_a(x_a, w)  # prep runs
    out_b = model_b(x_b)
    del out_b

    trace_a = ttnn.begin_trace_capture(device, cq_id=0)
    out_a = model_a(x_a, w)
    ttnn.end_trace_capture(device, trace_a, cq_id=0)
    trace_b = ttnn.begin_trace_capture(device, cq_id=0)
    out_b = model_b(x_b)
    ttnn.end_trace_capture(device, trace_b, cq_id=0)  # expect: TR010 info

    got, expected = [], []
    for value in (2.0, 3.0, 4.0):
        ttnn.copy_host_to_device_tensor(host(value), x_b)
        ttnn.execute_trace(device, trace_b, cq_id=0, blocking=False)
        got.append(ttnn.to_torch(out_b)[0, 0].item())  # read before A overwrites it
        ttnn.copy_host_to_device_tensor(host(value), x_a)
        ttnn.execute_trace(device, trace_a, cq_id=0, blocking=False)
        got.append(ttnn.to_torch(out_a)[0, 0].item())
        expected += [value + 1.0, (value + 20.0) * 2.0]
    print(f"replayed: {got}")
    print(f"expected: {expected}")
    print(f"traced == eager: {got == expected}")
    ttnn.release_trace(device, trace_a)
    ttnn.release_trace(device, trace_b)
    ttnn.close_device(device)


if __name__ == "__main__":
    main()
