"""Where the emulator still differs from ttnn 0.81.1 on the corpus, and why.

`KNOWN` maps a case key, or an op name for all its cases, to the reason; the main suite
fails when a case differs without being listed here and when a listed case no longer
differs (then the entry is removed). `NOT_COMPARED` lists the emulated ops the mock
device cannot run, with the reason; their numbers are still checked against torch.
"""

from __future__ import annotations

KNOWN: dict[str, str] = {
    "ttnn.conv2d": (
        "ttnn moves the weights to the device and runs its halo and sharding steps with their own DRAM, "
        "L1 and L1_SMALL buffers inside the call, and picks the output's sharding with its conv "
        "parallel-config heuristics; the emulator gives the output's spec for interleaved and "
        "height-sharded inputs, frees the activation with deallocate_activation and places the "
        "output, but allocates none of those intermediates"),
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


# Emulated ops the corpus has no cases for yet, by family: they joined the emulator with its
# name surface after the corpus was drawn (their spec and allocation are not yet compared).
NO_CASES_YET: dict[str, tuple[str, ...]] = {
    "in-place binary and comparison forms": (
        "ttnn.add_", "ttnn.sub_", "ttnn.subtract_", "ttnn.mul_", "ttnn.multiply_", "ttnn.div_", "ttnn.divide_",
        "ttnn.rsub_", "ttnn.eq_", "ttnn.ne_", "ttnn.gt_", "ttnn.ge_", "ttnn.lt_", "ttnn.le_", "ttnn.ldexp_",
        "ttnn.logaddexp_", "ttnn.logaddexp2_", "ttnn.squared_difference_", "ttnn.bias_gelu_",
        "ttnn.logical_and_", "ttnn.logical_or_", "ttnn.logical_xor_", "ttnn.logical_not_"),
    "element-wise and activation ops": (
        "ttnn.div", "ttnn.addcdiv", "ttnn.addcmul", "ttnn.lerp", "ttnn.atan", "ttnn.tan", "ttnn.sinh", "ttnn.cosh",
        "ttnn.ceil", "ttnn.floor", "ttnn.round", "ttnn.sign", "ttnn.erf", "ttnn.erfinv", "ttnn.expm1", "ttnn.log1p",
        "ttnn.logit", "ttnn.isfinite", "ttnn.clip", "ttnn.celu", "ttnn.elu", "ttnn.selu", "ttnn.leaky_relu",
        "ttnn.relu6", "ttnn.hardsigmoid", "ttnn.hardswish", "ttnn.hardtanh", "ttnn.mish", "ttnn.softplus",
        "ttnn.softsign", "ttnn.swish", "ttnn.identity", "ttnn.logical_and", "ttnn.logical_or", "ttnn.logical_xor",
        "ttnn.logical_not"),
    "reductions and statistics": ("ttnn.min", "ttnn.std", "ttnn.var", "ttnn.cumsum", "ttnn.topk",
                                  "ttnn.global_avg_pool2d", "ttnn.softmax_in_place"),
    "views, shape and memory ops": ("ttnn.view", "ttnn.experimental.view", "ttnn.expand", "ttnn.split", "ttnn.chunk",
                                    "ttnn.tril", "ttnn.triu", "ttnn.arange", "ttnn.fill", "ttnn.move",
                                    "ttnn.reallocate", "ttnn.tilize_with_zero_padding"),
}


def without_cases() -> set[str]:
    return {op for ops in NO_CASES_YET.values() for op in ops}


def reason_for(key: str) -> str | None:
    op = key.split("/", 1)[0]
    return KNOWN.get(key) or KNOWN.get(op)
