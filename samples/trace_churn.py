"""A trace captured and never replayed (TR017) and a serving loop that recaptures (TR018).

What it shows: the warm-up captures a decode trace although this run only serves prefill
requests (tt-metal #57270), and releases it on entering prefill mode without one replay. The prefill path
then releases and recaptures its trace whenever the request type flips between greedy and
sampled (tt-metal PR #51665): the same ops captured four times, each time paying a prep run
and a capture the replays were meant to save. Outputs are right; the program is slow.
Fix: capture only what this mode replays, and keep one trace per request type live.
"""

import torch

try:
    import ttnn
except ImportError:  # no ttnn installed: use ttrecord's hardware-free emulator
    from ttrecord import emulator as ttnn


def prefill(x, w):
    return ttnn.relu(ttnn.matmul(x, w))


def decode(x, w):
    return ttnn.multiply(ttnn.add(x, w), 0.5)


def capture(device, step, x, w):
    step(x, w)  # prep run
    trace_id = ttnn.begin_trace_capture(device, cq_id=0)  # expect: TR018 info
    out = step(x, w)
    ttnn.end_trace_capture(device, trace_id, cq_id=0)
    return trace_id, out


def main():
    device = ttnn.open_device(device_id=0, trace_region_size=800768)
    x = ttnn.from_torch(torch.ones(32, 32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    w = ttnn.from_torch(torch.eye(32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)

    decode(x, w)  # warm-up captures decode too, though this run serves prefill only
    decode_trace = ttnn.begin_trace_capture(device, cq_id=0)  # expect: TR017 info
    decode(x, w)
    ttnn.end_trace_capture(device, decode_trace, cq_id=0)
    ttnn.release_trace(device, decode_trace)  # entering prefill mode: never replayed

    trace_id, out, mode = None, None, None
    for request in ["greedy", "sampled", "greedy", "greedy", "sampled", "greedy"]:
        if request != mode:  # the request type flipped: release and recapture
            if trace_id is not None:
                ttnn.release_trace(device, trace_id)
            trace_id, out = capture(device, prefill, x, w)
            mode = request
        ttnn.execute_trace(device, trace_id, cq_id=0, blocking=True)
    print(f"prefill: {ttnn.to_torch(out)[0, 0].item()}")
    ttnn.release_trace(device, trace_id)
    ttnn.close_device(device)


if __name__ == "__main__":
    main()
