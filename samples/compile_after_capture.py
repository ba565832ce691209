"""Decode compiled after the prefill capture: its kernel binaries land on prefill trace memory (TR014).

What it shows: the ordering bug of vLLM on Tenstorrent and tt-metal's model tests. The prefill
step is warmed up and captured; the decode step is compiled only after that, while the prefill
trace is live. As in a served model, the KV cache fills the DRAM the warm-up left, so the only
free DRAM is what the prefill capture freed: its intermediate. A compile loads the program's
kernel binaries into DRAM top-down (tt-metal's `load_binaries`), right onto that intermediate.
Every prefill replay writes its intermediate there again, over decode's binaries, and the
decode program (here, the decode trace) then runs garbage: its replayed output differs from the
eager one. The emulator writes the overwritten binary's bytes as the op's output (on a card:
garbage or a hang); ttnn itself only warns "Allocating device buffers is potentially unsafe".
The hazard is reported once, at the decode op that compiled, with the overlap and the replay.
Fix: compile every path (prefill and decode) before the first capture.
"""

import torch

try:
    import ttnn
except ImportError:  # no ttnn installed: use ttrecord's hardware-free emulator
    from ttrecord import emulator as ttnn

TRACE_REGION = 65536
TILE_BYTES = 2048  # one 32x32 bf16 tile; every buffer of this sample takes 2048 B per DRAM bank


def prefill(x, w):
    h = ttnn.add(x, w)  # the intermediate: freed when the capture ends
    return ttnn.multiply(h, 0.5)


def decode(y):
    return ttnn.relu(y, memory_config=ttnn.L1_MEMORY_CONFIG)  # expect: TR014 error


def kv_cache_filling_dram(device, keep):
    """A KV cache sized, like a serving engine's, to the DRAM left free, minus `keep` bytes per
    bank for activations (row-major rows of 64 B, so any size fits exactly)."""
    config = getattr(device, "config", None)  # the emulator's p150 geometry; a p150 otherwise
    banks = getattr(config, "num_dram_banks", 8)
    top = getattr(config, "dram_bank_size", 4_278_190_080) - TRACE_REGION // banks
    binaries = 2 * TILE_BYTES  # prefill's two programs, loaded top-down by the warm-up
    free_from = 1_048_704 + 2 * TILE_BYTES  # after x and w
    per_bank = top - binaries - keep - free_from
    return ttnn.allocate_tensor_on_device(ttnn.Shape([per_bank // 64 * banks, 32]), ttnn.bfloat16,
                                          ttnn.ROW_MAJOR_LAYOUT, device)


def main():
    device = ttnn.open_device(device_id=0, trace_region_size=TRACE_REGION)
    x = ttnn.from_torch(torch.full((32, 32), 1.0), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    w = ttnn.from_torch(torch.full((32, 32), 2.0), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    prefill(x, w)  # warm-up: compiles prefill (not decode)
    kv = kv_cache_filling_dram(device, keep=2 * TILE_BYTES)

    prefill_trace = ttnn.begin_trace_capture(device, cq_id=0)
    prefill_out = prefill(x, w)
    ttnn.end_trace_capture(device, prefill_trace, cq_id=0)

    eager = decode(prefill_out)  # first decode: compiles now, while the prefill trace is live
    expected = ttnn.to_torch(eager)[0, 0].item()
    decode_trace = ttnn.begin_trace_capture(device, cq_id=0)
    decode_out = decode(prefill_out)
    ttnn.end_trace_capture(device, decode_trace, cq_id=0)

    ttnn.execute_trace(device, prefill_trace, cq_id=0, blocking=True)  # overwrites decode's binaries
    ttnn.execute_trace(device, decode_trace, cq_id=0, blocking=True)
    got = ttnn.to_torch(decode_out)[0, 0].item()
    print(f"decode replay: {got} (eager: {expected})")
    print(f"replay == eager: {got == expected}")
    ttnn.release_trace(device, decode_trace)
    ttnn.release_trace(device, prefill_trace)
    del kv
    ttnn.close_device(device)


if __name__ == "__main__":
    main()
