"""A crash inside a trace replay: the process dies by SIGSEGV in execute_trace.

What it shows: how a recording survives the process dying inside native code
(on hardware this happens with a corrupted trace, or with any replay on a mock
device). On the emulator the script asks for it: it sets
TTRECORD_EMULATOR_FAULT=segv@replay:2 before opening the device, so the second
execute_trace raises a real SIGSEGV. The exit status is -11 (killed by signal 11)
and the last line printed names the replay that was about to run.
"""

import os

import torch

try:
    import ttnn
except ImportError:  # no ttnn installed: use ttrecord's hardware-free emulator
    from ttrecord import emulator as ttnn

if getattr(ttnn, "__emulator__", False):
    os.environ.setdefault("TTRECORD_EMULATOR_FAULT", "segv@replay:2")


def main():
    device = ttnn.open_device(device_id=0, trace_region_size=800768)
    x = ttnn.from_torch(torch.randn(32, 32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    out = ttnn.exp(x)  # prep run
    trace_id = ttnn.begin_trace_capture(device, cq_id=0)
    out = ttnn.exp(x)
    ttnn.end_trace_capture(device, trace_id, cq_id=0)
    for replay in range(1, 4):
        print(f"replay {replay}", flush=True)
        ttnn.execute_trace(device, trace_id, cq_id=0, blocking=True)
    print(ttnn.to_torch(out)[0, 0].item())
    ttnn.release_trace(device, trace_id)
    ttnn.close_device(device)


if __name__ == "__main__":
    main()
