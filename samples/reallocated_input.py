"""An input freed inside the capture and allocated again at its address: zero hazards expected.

What it shows: the pattern tt-metal's traced CNN demos use. The model frees its
input as soon as the first op has consumed it (to make room in memory), so the
captured input's buffer is free when the capture ends. Right after the model,
still inside the capture, the program allocates a tensor of the same spec with
`ttnn.allocate_tensor_on_device`; the allocator hands back the freed address, the
very one the trace reads. Each step then copies new data into that tensor and
replays. The script checks the address and prints the replayed results next to
the expected ones.
"""

import torch

try:
    import ttnn
except ImportError:  # no ttnn installed: use ttrecord's hardware-free emulator
    from ttrecord import emulator as ttnn


def model(x, w):
    y = ttnn.relu(ttnn.matmul(x, w))
    ttnn.deallocate(x)  # the input is consumed: free it early
    return y


def host_input(value):
    return ttnn.from_torch(torch.full((32, 32), value), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)


def main():
    device = ttnn.open_device(device_id=0, trace_region_size=800768)
    w = ttnn.from_torch(torch.eye(32) * 2, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    out = model(ttnn.to_device(host_input(1.0), device), w)  # prep run
    del out

    x = ttnn.to_device(host_input(1.0), device)
    spec, captured_address = x.spec, x.buffer_address()
    trace_id = ttnn.begin_trace_capture(device, cq_id=0)
    out = model(x, w)
    x = ttnn.allocate_tensor_on_device(spec, device)  # lands on the address the trace reads
    ttnn.end_trace_capture(device, trace_id, cq_id=0)

    got, expected = [], []
    for value in (3.0, 4.0, 5.0):
        ttnn.copy_host_to_device_tensor(host_input(value), x)
        ttnn.execute_trace(device, trace_id, cq_id=0, blocking=True)
        got.append(ttnn.to_torch(out)[0, 0].item())
        expected.append(2 * value)
    print(f"input at the captured address: {x.buffer_address() == captured_address}")
    print(f"replayed: {got}")
    print(f"expected: {expected}")
    print(f"traced == eager: {got == expected}")
    ttnn.release_trace(device, trace_id)
    ttnn.close_device(device)


if __name__ == "__main__":
    main()
