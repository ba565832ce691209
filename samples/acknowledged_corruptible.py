"""A post-capture allocation over trace memory, acknowledged as corruptible (TR004 info).

What it shows: ttnn 0.81.1's trace allocation tracker lets a program opt out for a buffer
it knows the replay overwrites: `ttnn.tools.trace_allocation_tracker.acknowledge_corruptible`
for one tensor, `corruptible_allocation_scope(device)` for everything allocated inside it.
Here a scratch tensor is allocated after `end_trace_capture` on the address of the trace's
freed intermediate, and acknowledged: the replay overwrites it (the script prints both
values) and the program only uses it before the replay. ttrecord still reports the overlap,
as info naming the acknowledgement, not as an error; a second scratch tensor made inside the
scope and freed before the replay is not reported at all.
"""

import torch

try:
    import ttnn
except ImportError:  # no ttnn installed: use ttrecord's hardware-free emulator
    from ttrecord import emulator as ttnn


def step(x, w):
    hidden = ttnn.add(x, w)  # intermediate: freed when step returns
    return ttnn.multiply(hidden, 0.5)


def main():
    tracker = ttnn.tools.trace_allocation_tracker
    device = ttnn.open_device(device_id=0, trace_region_size=800768)
    x = ttnn.from_torch(torch.full((32, 32), 3.0), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    w = ttnn.from_torch(torch.full((32, 32), 5.0), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    out = step(x, w)  # prep run
    trace_id = ttnn.begin_trace_capture(device, cq_id=0)
    out = step(x, w)
    ttnn.end_trace_capture(device, trace_id, cq_id=0)

    scratch = ttnn.from_torch(torch.full((32, 32), 1.0), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)  # expect: TR004 info
    tracker.acknowledge_corruptible(scratch)  # the replay may overwrite it: used before only
    eager_value = ttnn.to_torch(scratch)[0, 0].item()
    with tracker.corruptible_allocation_scope(device):
        temp = ttnn.from_torch(torch.full((32, 32), 2.0), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
        ttnn.deallocate(temp)
    ttnn.execute_trace(device, trace_id, cq_id=0, blocking=True)
    replay_value = ttnn.to_torch(scratch)[0, 0].item()

    print(f"scratch before replay: {eager_value}")
    print(f"scratch after replay:  {replay_value}")
    print(f"output: {ttnn.to_torch(out)[0, 0].item()}")
    ttnn.release_trace(device, trace_id)
    ttnn.close_device(device)


if __name__ == "__main__":
    main()
