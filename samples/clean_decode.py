"""A correct traced decode loop: zero hazards expected.

What it shows: the pattern trace capture needs.
  * every tensor the trace touches (input, weights) is allocated before capture;
  * one eager prep run of the step before capture (on hardware it compiles the programs);
  * the captured region holds device ops only: no reads, writes or syncs;
  * each decode step copies the new input *into* the captured input buffer with
    copy_host_to_device_tensor, replays with execute_trace, and reads the output
    only after the replay;
  * no device allocation happens while the trace is alive, and it is released at the end.
The traced tokens equal the eager tokens, which the script prints.
"""

import torch

try:
    import ttnn
except ImportError:  # no ttnn installed: use ttrecord's hardware-free emulator
    from ttrecord import emulator as ttnn

HIDDEN, VOCAB, STEPS = 32, 64, 5


def decode_step(x, w1, w2):
    h = ttnn.gelu(ttnn.matmul(x, w1))
    logits = ttnn.matmul(h, w2)
    return ttnn.softmax(logits, dim=-1)


def to_host_input(embedding, token):
    rows = embedding[token].expand(32, HIDDEN).contiguous()
    return ttnn.from_torch(rows, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)  # host tensor


def main():
    torch.manual_seed(0)
    device = ttnn.open_device(device_id=0, trace_region_size=800768)
    embedding = torch.randn(VOCAB, HIDDEN)
    w1 = ttnn.from_torch(torch.randn(HIDDEN, HIDDEN) / 4, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    w2 = ttnn.from_torch(torch.randn(HIDDEN, VOCAB) / 4, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)

    # Eager reference loop (no trace yet).
    eager_tokens, token = [], 1
    for _ in range(STEPS):
        x = ttnn.to_device(to_host_input(embedding, token), device)
        probs = ttnn.to_torch(decode_step(x, w1, w2))
        token = int(torch.argmax(probs[0].float()))
        eager_tokens.append(token)
    del x

    # Persistent input, prep run, capture.
    x_in = ttnn.to_device(to_host_input(embedding, 1), device)
    out = decode_step(x_in, w1, w2)
    trace_id = ttnn.begin_trace_capture(device, cq_id=0)
    out = decode_step(x_in, w1, w2)
    ttnn.end_trace_capture(device, trace_id, cq_id=0)

    traced_tokens, token = [], 1
    for _ in range(STEPS):
        ttnn.copy_host_to_device_tensor(to_host_input(embedding, token), x_in)
        ttnn.execute_trace(device, trace_id, cq_id=0, blocking=False)
        probs = ttnn.to_torch(out)
        token = int(torch.argmax(probs[0].float()))
        traced_tokens.append(token)

    ttnn.release_trace(device, trace_id)
    ttnn.close_device(device)
    print(f"eager tokens:  {eager_tokens}")
    print(f"traced tokens: {traced_tokens}")
    print(f"traced == eager: {traced_tokens == eager_tokens}")


if __name__ == "__main__":
    main()
