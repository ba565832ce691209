"""A generic `Tracer` wrapper class: zero hazards expected.

What it shows: the wrapper many model codebases grow around trace capture.
`Tracer(device, fn, example)` allocates a persistent input on the device,
runs `fn` once eagerly (the prep run) and the input copy it does on every call
(so no program compiles, and no kernel binary is allocated, while the trace
lives), captures `fn` on that input, and keeps the captured output. Calling the tracer with a device tensor copies it *into*
the captured input with `ttnn.copy` (a device op, so nothing is re-allocated)
and replays the trace. The caller feeds it from a staging tensor that was also
allocated before the capture, so no buffer is allocated while the trace lives.
Traced results equal eager ones, which the script prints.
"""

import torch

try:
    import ttnn
except ImportError:  # no ttnn installed: use ttrecord's hardware-free emulator
    from ttrecord import emulator as ttnn


class Tracer:
    """Capture `fn(input)` once; replay it for new inputs copied in place."""

    def __init__(self, device, fn, example):
        self.device = device
        self.input = ttnn.clone(example)
        ttnn.copy(example, self.input)  # compile the copy __call__ uses, too
        fn(self.input)  # prep run: compile before capture
        self.trace_id = ttnn.begin_trace_capture(device, cq_id=0)
        self.output = fn(self.input)
        ttnn.end_trace_capture(device, self.trace_id, cq_id=0)

    def __call__(self, new_input):
        ttnn.copy(new_input, self.input)
        ttnn.execute_trace(self.device, self.trace_id, cq_id=0, blocking=True)
        return self.output

    def release(self):
        ttnn.release_trace(self.device, self.trace_id)


def block(x, weight, bias):
    h = ttnn.linear(x, weight, bias=bias)
    h = ttnn.relu(h)
    return ttnn.rms_norm(h, epsilon=1e-6)


def main():
    torch.manual_seed(0)
    device = ttnn.open_device(device_id=0, trace_region_size=800768)
    weight = ttnn.from_torch(torch.randn(64, 64) / 8, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    bias = ttnn.from_torch(torch.randn(1, 64) / 8, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    inputs = [torch.randn(32, 64) for _ in range(3)]

    def fn(x):
        return block(x, weight, bias)

    eager = []
    for data in inputs:
        x = ttnn.from_torch(data, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
        eager.append(ttnn.to_torch(fn(x)))
    del x

    staging = ttnn.from_torch(inputs[0], dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    tracer = Tracer(device, fn, staging)
    traced = []
    for data in inputs:
        ttnn.copy_host_to_device_tensor(ttnn.from_torch(data, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT), staging)
        traced.append(ttnn.to_torch(tracer(staging)))
    tracer.release()
    ttnn.close_device(device)

    same = all(torch.equal(a, b) for a, b in zip(eager, traced))
    print(f"traced == eager for {len(inputs)} inputs: {same}")


if __name__ == "__main__":
    main()
