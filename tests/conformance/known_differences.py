"""Where the emulator still differs from ttnn 0.81.1 on the corpus, and why.

`KNOWN` maps a case key, or an op name for all its cases, to the reason; the main suite
fails when a case differs without being listed here and when a listed case no longer
differs (then the entry is removed). `NOT_COMPARED` lists the emulated ops the mock
device cannot run, with the reason; their numbers are still checked against torch.
"""

from __future__ import annotations

KNOWN: dict[str, str] = {
    "ttnn.conv2d": (
        "ttnn allocates its own temporaries inside the call, measured per case on the mock p150: a 1x1 "
        "conv on an interleaved input runs as a matmul with the weights prepared in DRAM (two DRAM "
        "temporaries, freed after the output); a 3x3 (or strided) conv on a DRAM input first writes a "
        "DRAM copy of the input and frees it, then an L1 height-sharded copy of the input, the DRAM "
        "weights, the halo's L1 output (allocated, freed and allocated again), the sharded L1 conv "
        "output, and for a DRAM output a DRAM copy of it, freeing all but the output before returning; "
        "the first call of each conv program also allocates five small L1_SMALL sliding-window config "
        "buffers that stay alive with the program (a second call with the same shapes allocates none); "
        "an L1-interleaved 3x3 input gives a block-sharded L1 output over the conv's own core grid. The "
        "sizes and the output sharding come from its conv parallel-config heuristics, which the emulator "
        "does not reproduce: it gives the output's spec for interleaved and height-sharded inputs, frees "
        "the activation with deallocate_activation where ttnn does and places the output, but allocates "
        "none of those temporaries"),
    "ttnn.max_pool2d": (
        "ttnn writes the output sharded in L1 (height, width or block, over cores its pool "
        "parallel-config heuristics choose); the emulator writes it interleaved in the input's memory"),
    "ttnn.layer_norm/llama8b-decode": (
        "ttnn rejects the call because its circular buffers for a 4096-wide row do not fit in L1 "
        "(TT_THROW in dataflow_buffer.cpp); the emulator does not model circular-buffer capacity"),
    "ttnn.linear/decode-l1": (
        "with an L1-interleaved output and no program config ttnn adds the bias as a second step, "
        "through an intermediate the size of the output; the emulator fuses the bias"),
    "ttnn.pad/yolo-hs": (
        "ttnn keeps the height-sharded input's shard spec for the padded output and rejects it (more "
        "shards than cores); the emulator writes the padded output interleaved"),
    "ttnn.repeat/yolo-hs": (
        "ttnn height-shards the repeated output over cores of its own choosing (64 cores of [32, 32]); "
        "the emulator writes it interleaved in L1"),
    "ttnn.addcdiv/llama-mlp-bfp8": (
        "on bfloat8_b inputs ttnn computes addcdiv as a composite of element-wise steps, each into an "
        "intermediate the input's size (nine allocated, eight freed inside the call, the last one the output); "
        "the emulator computes it in one step (the bfloat16 inputs take the fused path, which it matches)"),
    "ttnn.cumsum/f32": (
        "a float32 cumsum along the last dim allocates two 131072-byte-per-bank DRAM intermediates (freed "
        "around the output) on ttnn; the emulator allocates the output only (bfloat16 inputs match)"),
    "ttnn.expand/cols": (
        "expanding the last dim of a TILE tensor goes through two small DRAM intermediates on ttnn (256 and "
        "512 bytes per bank: its ROW_MAJOR repeat) before the tiled output; the emulator expands in one step"),
    "ttnn.global_avg_pool2d/batch2": (
        "with more than one image ttnn pools through a second chain of intermediates (512, 4096 and 128 "
        "bytes per bank) and leaves a 128-byte DRAM buffer alive; the emulator models the one-image path "
        "only (untilize into an intermediate, then the output)"),
    "ttnn.global_avg_pool2d/14x14": (
        "follows from batch2 (the case before it on the same device): the 128-byte buffer ttnn leaves alive "
        "splits the free block the emulator's allocator puts the intermediate in"),
    "ttnn.global_avg_pool2d/4x4": "follows from batch2, as 14x14 does",
    "ttnn.topk/wide": (
        "over a 4096-wide row ttnn's multi-core topk allocates two intermediates (32768 and 512 bytes per "
        "bank: per-core partial values and indices) before the outputs; the emulator allocates the outputs "
        "only (rows up to 2048 wide match)"),
    "ttnn.repeat_interleave": (
        "ttnn builds repeat_interleave from reshapes and repeats with DRAM intermediates (and a "
        "DRAM output for a sharded input); the emulator computes it in one step"),
}

NOT_COMPARED: dict[str, str] = {
    "ttnn.from_torch": "takes a torch tensor: the lane's python has no torch (its 3.12 wheel is the multi-GB CUDA build)",
    "ttnn.as_tensor": "takes a torch tensor: the lane's python has no torch",
    "ttnn.to_torch": "returns a torch tensor: the lane's python has no torch",
    "ttnn.all_gather": "a collective: needs a multi-chip mesh with fabric, which the one-chip mock lane does not open",
    "ttnn.reduce_scatter": "a collective: needs a multi-chip mesh with fabric",
    "ttnn.all_reduce": "a collective: needs a multi-chip mesh with fabric",
    "ttnn.experimental.all_gather_async": "a collective: needs a multi-chip mesh with fabric and global semaphores",
    "ttnn.experimental.reduce_scatter_minimal_async": "a collective: needs a multi-chip mesh with fabric and global semaphores",
    "ttnn.experimental.all_reduce_async": "a collective: needs a multi-chip mesh with fabric and global semaphores",
}


# Emulated ops the corpus has no cases for, by family (none: every emulated op has its cases).
NO_CASES_YET: dict[str, tuple[str, ...]] = {}


def without_cases() -> set[str]:
    return {op for ops in NO_CASES_YET.values() for op in ops}


def reason_for(key: str) -> str | None:
    op = key.split("/", 1)[0]
    return KNOWN.get(key) or KNOWN.get(op)
