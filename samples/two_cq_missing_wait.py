"""Two command queues with a missing wait: the replay can read an input half-written (TR012).

What it shows: two_cq_overlapped_input.py without `ttnn.wait_for_event(OPS, write_event)`.
The write on CQ 1 and the replay on CQ 0 that reads the same buffer are ordered by nothing,
so on a card the replay sometimes computes on the previous input, or a mix of both. ttrecord
reports it at the execute_trace line, naming the write it races with and the missing edge.
Under `TTRECORD_EMULATOR_QUEUES=adversarial` the emulator lets CQ 0 run ahead of CQ 1, as a
card may, and the replayed outputs differ from the eager ones (every replay reads the first
input); in the default (eager) mode they happen to be equal.
Fix: record an event on CQ 1 after the write and wait for it on CQ 0 before execute_trace.
"""

import torch

try:
    import ttnn
except ImportError:  # no ttnn installed: use ttrecord's hardware-free emulator
    from ttrecord import emulator as ttnn

OPS, WRITE = 0, 1


def step(x, w):
    return ttnn.multiply(ttnn.add(x, w), 0.5)


def tile(values, device=None):
    return ttnn.from_torch(values, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)


def main():
    device = ttnn.open_device(device_id=0, trace_region_size=800768, num_command_queues=2)
    torch.manual_seed(0)
    host_inputs = [tile(torch.randn(32, 32)) for _ in range(4)]
    w = tile(torch.full((32, 32), 2.0), device)
    x = tile(torch.zeros(32, 32), device)  # the captured input: refreshed in place
    eager = [ttnn.to_torch(step(tile(ttnn.to_torch(h), device), w)) for h in host_inputs]  # also the warm-up
    ttnn.copy_host_to_device_tensor(host_inputs[0], x)

    trace_id = ttnn.begin_trace_capture(device, cq_id=OPS)
    out = step(x, w)
    ttnn.end_trace_capture(device, trace_id, cq_id=OPS)

    op_event = ttnn.record_event(device, OPS)
    replayed = []
    for host_input in host_inputs:
        ttnn.wait_for_event(WRITE, op_event)  # the previous replay has read x
        ttnn.copy_host_to_device_tensor(host_input, x, cq_id=WRITE)  # races with the replay below
        ttnn.record_event(device, WRITE)  # recorded, but CQ 0 never waits for it
        ttnn.execute_trace(device, trace_id, cq_id=OPS, blocking=False)  # expect: TR012
        op_event = ttnn.record_event(device, OPS)
        replayed.append(ttnn.to_torch(out))  # a blocking read on CQ 0

    ttnn.release_trace(device, trace_id)
    same = all(torch.equal(a, b) for a, b in zip(replayed, eager, strict=True))
    print(f"replayed outputs equal eager: {same}")
    ttnn.close_device(device)


if __name__ == "__main__":
    main()
