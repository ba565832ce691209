"""A non-blocking readback used before the host waited for it (TR012).

What it shows: `Tensor.cpu(blocking=False)` enqueues the read and returns at once; its host
tensor is filled when the command queue gets to the read. Converting it with `ttnn.to_torch`
before `ttnn.synchronize_device` (or `ttnn.event_synchronize` on an event recorded after the
read) races with the device: on a card it sometimes returns data that has not arrived. ttrecord
reports it at the host's use, naming the read. Under `TTRECORD_EMULATOR_QUEUES=adversarial`
the early value is all zeros; the value read after synchronizing is right in every mode.
"""

import torch

try:
    import ttnn
except ImportError:  # no ttnn installed: use ttrecord's hardware-free emulator
    from ttrecord import emulator as ttnn


def main():
    device = ttnn.open_device(device_id=0, trace_region_size=800768)
    x = ttnn.from_torch(torch.full((32, 32), 3.0), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    w = ttnn.from_torch(torch.full((32, 32), 5.0), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    out = ttnn.add(x, w)  # warm-up
    trace_id = ttnn.begin_trace_capture(device, cq_id=0)
    out = ttnn.add(x, w)
    ttnn.end_trace_capture(device, trace_id, cq_id=0)

    ttnn.execute_trace(device, trace_id, cq_id=0, blocking=False)
    host_out = out.cpu(blocking=False)
    early = ttnn.to_torch(host_out)[0, 0].item()  # expect: TR012
    ttnn.synchronize_device(device)
    late = ttnn.to_torch(host_out)[0, 0].item()

    print(f"read before synchronize: {early}")
    print(f"read after synchronize:  {late}")
    ttnn.release_trace(device, trace_id)
    ttnn.close_device(device)


if __name__ == "__main__":
    main()
