"""A buffer freed and a trace released while a non-blocking replay on another queue may still
read them (TR012).

What it shows: a server replays its decode trace on CQ 1 without blocking and lets the host
wait only when it reads a result. At the end of a request it frees the trace's input and, for
the next request, releases the trace, each right after the last replay was enqueued. ttnn
hands the freed memory (and the released trace's command buffer) back to the allocator at
once, without waiting for the device, so the next allocation or capture can overwrite what CQ 1
is still reading: wrong results, or the hang tt-xla #5828 hit when a server released traces
under in-flight replays. ttrecord reports each at the free and the release, naming the replay
they race with, the line that allocated the buffer and the argument each call touched it by.
Fix: wait for CQ 1 before freeing or releasing (`ttnn.synchronize_device(device, cq_id=1)`,
or `ttnn.event_synchronize` on an event recorded after the replay).
"""

import torch

try:
    import ttnn
except ImportError:  # no ttnn installed: use ttrecord's hardware-free emulator
    from ttrecord import emulator as ttnn

SERVE = 1  # the queue the replays run on


def step(x, w):
    return ttnn.multiply(ttnn.add(x, w), 0.5)


def tile(values, device=None):
    return ttnn.from_torch(values, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)


def capture(device, x, w):
    step(x, w)  # warm-up: compiles the ops
    trace_id = ttnn.begin_trace_capture(device, cq_id=0)
    out = step(x, w)
    ttnn.end_trace_capture(device, trace_id, cq_id=0)
    ttnn.synchronize_device(device)  # the warm-up on CQ 0 is done before CQ 1 replays
    return trace_id, out


def serve(device, trace_id, out, steps):
    """Replays on CQ 1; the host waits for a replay only to read its result."""
    results = []
    for _ in range(steps):
        ttnn.execute_trace(device, trace_id, cq_id=SERVE, blocking=False)
        ttnn.event_synchronize(ttnn.record_event(device, SERVE))
        results.append(ttnn.to_torch(out))
    ttnn.execute_trace(device, trace_id, cq_id=SERVE, blocking=False)  # the request's last step
    return results


def main():
    device = ttnn.open_device(device_id=0, trace_region_size=800768, num_command_queues=2)
    torch.manual_seed(0)
    w = tile(torch.full((32, 32), 2.0), device)

    x = tile(torch.randn(32, 32), device)  # the first request's input
    first, out = capture(device, x, w)
    serve(device, first, out, 2)
    ttnn.deallocate(x)  # expect: TR012
    ttnn.synchronize_device(device)
    ttnn.release_trace(device, first)

    x = tile(torch.randn(32, 32), device)  # the next request's input
    second, out = capture(device, x, w)
    serve(device, second, out, 2)
    ttnn.release_trace(device, second)  # expect: TR012
    ttnn.synchronize_device(device)
    ttnn.close_device(device)


if __name__ == "__main__":
    main()
