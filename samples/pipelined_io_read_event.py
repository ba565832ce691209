"""Pipelined IO on two command queues with the read event recorded too early (TR012).

What it shows: the bug tt-metal's pipelined-IO executor shipped (tt-metal #41720). Inputs are
written and outputs read on CQ 1 (IO) while CQ 0 (OPS) replays the trace. Before a replay
overwrites the output, CQ 0 waits for `read_event`, meant to say "the previous output has been
read". But `read_event` is recorded on CQ 1 *before* the non-blocking read is enqueued, so it
covers everything on CQ 1 except that read: the next replay may overwrite the output while it
is still being read. ttrecord pins the finding on the record_event line, naming the read and
the replay that race. Under `TTRECORD_EMULATOR_QUEUES=adversarial` every read returns a later
replay's output; recording the event after the read (one line down) fixes it.
"""

import torch

try:
    import ttnn
except ImportError:  # no ttnn installed: use ttrecord's hardware-free emulator
    from ttrecord import emulator as ttnn

OPS, IO = 0, 1


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

    read_event = ttnn.record_event(device, IO)
    ttnn.wait_for_event(IO, ttnn.record_event(device, OPS))  # after the warm-up's write of x
    ttnn.copy_host_to_device_tensor(host_inputs[0], x, cq_id=IO)
    write_event = ttnn.record_event(device, IO)
    pending = []
    for i in range(len(host_inputs)):
        ttnn.wait_for_event(OPS, write_event)  # the replay reads x after the write
        ttnn.wait_for_event(OPS, read_event)  # ... and overwrites out after it was read
        ttnn.execute_trace(device, trace_id, cq_id=OPS, blocking=False)
        op_event = ttnn.record_event(device, OPS)
        ttnn.wait_for_event(IO, op_event)  # the replay has read x and written out
        if i + 1 < len(host_inputs):  # the next input goes in while this output comes back
            ttnn.copy_host_to_device_tensor(host_inputs[i + 1], x, cq_id=IO)
            write_event = ttnn.record_event(device, IO)
        read_event = ttnn.record_event(device, IO)  # expect: TR012
        pending.append(out.cpu(blocking=False, cq_id=IO))  # the read the event was meant to cover

    ttnn.synchronize_device(device)
    replayed = [ttnn.to_torch(h) for h in pending]
    ttnn.release_trace(device, trace_id)
    same = all(torch.equal(a, b) for a, b in zip(replayed, eager, strict=True))
    print(f"replayed outputs equal eager: {same}")
    ttnn.close_device(device)


if __name__ == "__main__":
    main()
