"""A captured input freed and allocated again right after the capture: no error or warning.

What it shows: the idiom of tt-metal's traced CNN executors, done after
`end_trace_capture` instead of inside the capture. The model's input lives in
L1, made from a DRAM staging tensor by a memory-config change (a reshard). After
the capture the program frees that L1 input and allocates a tensor of the same
spec; the allocator hands back the freed address, the very range the trace reads.
Each step then fills it before the replay, in one of two ways:
  * copying into the persistent tensor (`ttnn.copy(staging, l1_input)`);
  * making a fresh L1 tensor with `ttnn.to_memory_config` that lands on the same
    address, replaying, and freeing it again.
Either way the trace reads the data written for that step: the input of a trace
is the address range it reads, whatever tensor holds it. The script prints the
replayed results next to the expected ones.

One latent note (TR014 info): the first `ttnn.copy` compiles while the trace is live. Its kernel
binaries are placed wherever DRAM is free, the trace's freed intermediates included; here none
landed on the trace's memory, which only warming `ttnn.copy` before the capture guarantees.
"""

import torch

try:
    import ttnn
except ImportError:  # no ttnn installed: use ttrecord's hardware-free emulator
    from ttrecord import emulator as ttnn


def model(x, w):
    return ttnn.relu(ttnn.matmul(x, w))


def host_input(value):
    return ttnn.from_torch(torch.full((32, 32), value), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)


def main():
    device = ttnn.open_device(device_id=0, trace_region_size=800768)
    w = ttnn.from_torch(torch.eye(32) * 2, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    staging = ttnn.allocate_tensor_on_device(ttnn.Shape([32, 32]), ttnn.bfloat16, ttnn.TILE_LAYOUT, device)
    ttnn.copy_host_to_device_tensor(host_input(1.0), staging)
    l1_input = ttnn.to_memory_config(staging, ttnn.L1_MEMORY_CONFIG)
    out = model(l1_input, w)  # prep run

    spec, captured_address = l1_input.spec, l1_input.buffer_address()
    trace_id = ttnn.begin_trace_capture(device, cq_id=0)
    out = model(l1_input, w)
    ttnn.end_trace_capture(device, trace_id, cq_id=0)
    ttnn.deallocate(l1_input)
    l1_input = ttnn.allocate_tensor_on_device(spec, device)  # back on the captured address

    got, expected = [], []
    for value in (3.0, 4.0):  # copy into the persistent input
        ttnn.copy_host_to_device_tensor(host_input(value), staging)
        ttnn.copy(staging, l1_input)  # expect: TR014 info
        ttnn.execute_trace(device, trace_id, cq_id=0, blocking=True)
        got.append(ttnn.to_torch(out)[0, 0].item())
        expected.append(2 * value)
    same_address = l1_input.buffer_address() == captured_address
    ttnn.deallocate(l1_input)
    for value in (5.0, 6.0):  # a fresh input on the captured address each step
        ttnn.copy_host_to_device_tensor(host_input(value), staging)
        l1_input = ttnn.to_memory_config(staging, ttnn.L1_MEMORY_CONFIG)
        same_address = same_address and l1_input.buffer_address() == captured_address
        ttnn.execute_trace(device, trace_id, cq_id=0, blocking=True)
        got.append(ttnn.to_torch(out)[0, 0].item())
        expected.append(2 * value)
        ttnn.deallocate(l1_input)
    print(f"input at the captured address: {same_address}")
    print(f"replayed: {got}")
    print(f"expected: {expected}")
    print(f"traced == eager: {got == expected}")
    ttnn.release_trace(device, trace_id)
    ttnn.close_device(device)


if __name__ == "__main__":
    main()
