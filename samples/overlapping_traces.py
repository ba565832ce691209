"""Two live traces whose written address ranges overlap (TR010).

What it shows: trace A is captured and its intermediate is freed at the end of
the capture. Trace B is captured next (allocations inside a capture are not
warned about) and its output lands on A's freed intermediate. Both traces are
alive and both write that range, so replaying A after B destroys B's output.
The script prints B's output before and after A's replay.
(Compare tenstorrent/tt-metal#48869 on overlapping trace regions.)
Sharing memory alone is not the error: the hazard is the read of B's output
after A's replay overwrote it, reported at that read.
Fix: keep intermediates of every live trace allocated, release A before
capturing B, or capture both as one trace.
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


def main():
    device = ttnn.open_device(device_id=0, trace_region_size=800768)
    x = ttnn.from_torch(torch.full((32, 32), 1.0), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    w = ttnn.from_torch(torch.full((32, 32), 20.0), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)

    out_a = model_a(x, w)  # prep runs
    out_b = model_b(x)
    del out_b

    trace_a = ttnn.begin_trace_capture(device, cq_id=0)
    out_a = model_a(x, w)
    ttnn.end_trace_capture(device, trace_a, cq_id=0)

    trace_b = ttnn.begin_trace_capture(device, cq_id=0)
    out_b = model_b(x)
    ttnn.end_trace_capture(device, trace_b, cq_id=0)

    ttnn.execute_trace(device, trace_b, cq_id=0, blocking=True)
    before = ttnn.to_torch(out_b)[0, 0].item()
    ttnn.execute_trace(device, trace_a, cq_id=0, blocking=True)
    after = ttnn.to_torch(out_b)[0, 0].item()  # expect: TR010

    print(f"trace B output after B's replay: {before} (expected 2.0)")
    print(f"trace B output after A's replay: {after}")
    print(f"overwritten by the other trace: {after != before}")
    ttnn.release_trace(device, trace_a)
    ttnn.release_trace(device, trace_b)
    ttnn.close_device(device)


if __name__ == "__main__":
    main()
