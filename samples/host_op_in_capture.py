"""Host-side work inside the captured region runs once, never on replay (TR008).

What it shows: a step that builds its position input on the host with ttnn
(a host tensor from `from_torch` without a device, tilized by `to_layout` on the
host) inside the captured region. None of it is a device command, so none of it
is in the trace: it ran in the eager prep run and once during capture, and the
replays never repeat it. The script counts how often the host work ran compared
to how many steps were replayed.
Fix: do host work outside the captured region, before each execute_trace, and
copy its result into a captured input buffer.
"""

import torch

try:
    import ttnn
except ImportError:  # no ttnn installed: use ttrecord's hardware-free emulator
    from ttrecord import emulator as ttnn

host_work_runs = 0


def step(x, pos, position):
    global host_work_runs
    host_work_runs += 1
    positions = ttnn.from_torch(torch.full((32, 32), float(position)), dtype=ttnn.bfloat16)  # expect: TR008
    positions = ttnn.to_layout(positions, ttnn.TILE_LAYOUT)  # expect: TR008
    return ttnn.add(x, pos), positions


def main():
    device = ttnn.open_device(device_id=0, trace_region_size=800768)
    x = ttnn.from_torch(torch.zeros(32, 32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    pos = ttnn.from_torch(torch.zeros(32, 32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)

    out, positions = step(x, pos, position=0)  # prep run
    trace_id = ttnn.begin_trace_capture(device, cq_id=0)
    out, positions = step(x, pos, position=0)
    ttnn.end_trace_capture(device, trace_id, cq_id=0)
    runs_after_capture = host_work_runs

    replays = 3
    for _ in range(replays):
        ttnn.execute_trace(device, trace_id, cq_id=0, blocking=True)
    print(f"replayed steps: {replays}")
    print(f"host work ran: {host_work_runs} time(s) (prep run + capture), {host_work_runs - runs_after_capture} during replays")
    print(f"host positions tensor still holds step 0: {ttnn.to_torch(positions)[0, 0].item()}")
    ttnn.release_trace(device, trace_id)
    ttnn.close_device(device)


if __name__ == "__main__":
    main()
