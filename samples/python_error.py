"""An ordinary Python exception after some device work (no hazard).

What it shows: a program that fails for a plain Python reason (a shape check
in user code) after it has opened a device and run ops. The exception
propagates and the process exits with status 1; a recording of it keeps every
event up to the failure and the error itself.
"""

import torch

try:
    import ttnn
except ImportError:  # no ttnn installed: use ttrecord's hardware-free emulator
    from ttrecord import emulator as ttnn


def check_logits(logits, vocab_size):
    if logits.shape[-1] != vocab_size:
        raise ValueError(f"expected {vocab_size} logits, got {logits.shape[-1]}")


def main():
    device = ttnn.open_device(device_id=0)
    x = ttnn.from_torch(torch.randn(32, 64), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    w = ttnn.from_torch(torch.randn(64, 96), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    logits = ttnn.softmax(ttnn.matmul(x, w), dim=-1)
    check_logits(logits, vocab_size=128)
    ttnn.close_device(device)


if __name__ == "__main__":
    main()
