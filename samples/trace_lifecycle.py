"""Trace lifecycle mistakes (TR009): replaying a released trace, never releasing one.

What it shows: (1) a trace released after its last planned use and then replayed
once more by a retry path: real ttnn raises `TT_FATAL ... Trace instance N must
exist on Mesh device ...`; the script catches it to carry on. (2) A second trace
that is captured and replayed but never released: its command buffer stays in
the trace region and every later allocation is flagged as unsafe until the
device closes.
"""

import torch

try:
    import ttnn
except ImportError:  # no ttnn installed: use ttrecord's hardware-free emulator
    from ttrecord import emulator as ttnn


def model(x, w):
    return ttnn.relu(ttnn.add(x, w))


def main():
    device = ttnn.open_device(device_id=0, trace_region_size=800768)
    x = ttnn.from_torch(torch.randn(32, 32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    w = ttnn.from_torch(torch.randn(32, 32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    out = model(x, w)  # prep run

    trace_id = ttnn.begin_trace_capture(device, cq_id=0)
    out = model(x, w)
    ttnn.end_trace_capture(device, trace_id, cq_id=0)
    ttnn.execute_trace(device, trace_id, cq_id=0)
    ttnn.release_trace(device, trace_id)
    try:
        ttnn.execute_trace(device, trace_id, cq_id=0)  # expect: TR009
    except RuntimeError as error:
        message = str(error).splitlines()
        reason = message[message.index("info:") + 1] if "info:" in message else message[0]
        print(f"replay of released trace {int(trace_id)} failed: {reason}")

    second = ttnn.begin_trace_capture(device, cq_id=0)  # expect: TR009
    out = model(x, w)
    ttnn.end_trace_capture(device, second, cq_id=0)
    ttnn.execute_trace(device, second, cq_id=0)
    print(f"trace {int(second)} replayed and left unreleased")
    ttnn.close_device(device)


if __name__ == "__main__":
    main()
