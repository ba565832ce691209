"""Two command queues, correctly ordered: inputs written on CQ 1 while replays run on CQ 0.

What it shows: tt-metal's overlapped-input pattern (models/tt_cnn/tt/executor.py). Each new
input is copied into the captured input tensor on CQ 1 while CQ 0 replays the trace; two
events order them: CQ 1 waits for the previous replay before overwriting the input, and CQ 0
waits for the write before the next replay. No finding, and the replayed outputs equal the
eager ones in every emulator queue mode (TTRECORD_EMULATOR_QUEUES=eager|adversarial|random:N).
Compare two_cq_missing_wait.py, where the second wait is missing.
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
        ttnn.copy_host_to_device_tensor(host_input, x, cq_id=WRITE)
        write_event = ttnn.record_event(device, WRITE)
        ttnn.wait_for_event(OPS, write_event)  # the replay reads x after the write
        ttnn.execute_trace(device, trace_id, cq_id=OPS, blocking=False)
        op_event = ttnn.record_event(device, OPS)
        replayed.append(ttnn.to_torch(out))  # a blocking read on CQ 0

    ttnn.release_trace(device, trace_id)
    same = all(torch.equal(a, b) for a, b in zip(replayed, eager, strict=True))
    print(f"replayed outputs equal eager: {same}")
    ttnn.close_device(device)


if __name__ == "__main__":
    main()
