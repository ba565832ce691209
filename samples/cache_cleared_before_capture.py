"""The program cache cleared between the warm-up and the capture (TR013).

What it shows: both steps are warmed up, the prefill step is captured, then a helper resets
the device's program cache (`disable_and_clear_program_cache()` then `enable_program_cache()`,
as a mesh reshape or a test fixture does: tt-mlir #7609, tt-metal PR #56243) before the decode
step is captured. The warm-up's programs are gone, so decode's first op compiles inside the
capture and ttnn aborts it ("Cannot load new binaries during trace capture."). The warm-up
call had the same key; the finding names the clear as the cause.
Fix: do not clear the program cache after warming up, or warm up again after the clear.
"""

import torch

try:
    import ttnn
except ImportError:  # no ttnn installed: use ttrecord's hardware-free emulator
    from ttrecord import emulator as ttnn


def prefill(x, w):
    return ttnn.relu(ttnn.add(x, w))


def decode(x, w):
    return ttnn.multiply(x, w)  # expect: TR013


def reset_program_cache(device):
    device.disable_and_clear_program_cache()
    device.enable_program_cache()


def main():
    device = ttnn.open_device(device_id=0, trace_region_size=800768)
    x = ttnn.from_torch(torch.full((32, 32), 1.0), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    w = ttnn.from_torch(torch.full((32, 32), 2.0), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    prefill(x, w)  # warm-up of both steps
    decode(x, w)

    prefill_trace = ttnn.begin_trace_capture(device, cq_id=0)
    prefill_out = prefill(x, w)
    ttnn.end_trace_capture(device, prefill_trace, cq_id=0)

    reset_program_cache(device)

    decode_trace = ttnn.begin_trace_capture(device, cq_id=0)
    decode_out = decode(x, w)  # compiles again: aborted
    ttnn.end_trace_capture(device, decode_trace, cq_id=0)
    ttnn.execute_trace(device, prefill_trace, cq_id=0, blocking=True)
    ttnn.execute_trace(device, decode_trace, cq_id=0, blocking=True)
    print(ttnn.to_torch(prefill_out)[0, 0].item(), ttnn.to_torch(decode_out)[0, 0].item())


if __name__ == "__main__":
    main()
