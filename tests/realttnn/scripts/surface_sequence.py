"""The ttnn 0.81.1 names the emulator added for model code (in-place binaries, div, arange,
reallocate, view, split/chunk, topk, Tensor.__getitem__, the 4-argument pad, more element-wise
ops), on the real allocator and the emulator. One SEQ line of JSON: per call, each output's
buffer_address(), shape, padded shape, dtype, layout and buffer type, the live buffers the
call added and the buffer_allocate/buffer_deallocate nodes ttnn.graph saw; plus host-tensor
values of Tensor.pad/unpad. Each call runs once before it is measured (program buffers).
RTTNN_DIRECT_EMULATOR=1 imports ttrecord.emulator as ttnn."""
import gc
import json
import os
import numpy as np
if os.environ.get("RTTNN_DIRECT_EMULATOR") == "1":
    import ttrecord.emulator as ttnn
else:
    import ttnn

dev = ttnn.open_device(device_id=0, trace_region_size=1 << 20)
DRAM, L1 = ttnn.DRAM_MEMORY_CONFIG, ttnn.L1_MEMORY_CONFIG


def mk(shape, layout=ttnn.TILE_LAYOUT, dtype=ttnn.bfloat16, mem=DRAM):
    return ttnn.Tensor(np.zeros(shape, dtype=np.float32), dtype, dev, layout, mem)


a = mk((1, 1, 64, 64))
b = mk((1, 1, 64, 64))
f32 = mk((1, 1, 32, 64), dtype=ttnn.float32)
rm = mk((1, 1, 64, 64), ttnn.ROW_MAJOR_LAYOUT)
batch = mk((2, 1, 64, 64))
nhwc = mk((1, 8, 8, 64), ttnn.ROW_MAJOR_LAYOUT)
rm_odd = mk((1, 1, 20, 40), ttnn.ROW_MAJOR_LAYOUT)
CALLS = [
    ("arange_dram_tile", lambda: ttnn.arange(0, 64, 1, device=dev, layout=ttnn.TILE_LAYOUT)),
    ("arange_l1_row_major", lambda: ttnn.arange(0, 1024, 1, dtype=ttnn.int32, device=dev, memory_config=L1)),
    ("add_", lambda: ttnn.add_(a, b)),
    ("mul_scalar", lambda: ttnn.mul_(a, 2.0)),
    ("sub_", lambda: ttnn.sub_(a, b)),
    ("div_floor", lambda: ttnn.div(a, b, rounding_mode="floor")),
    ("softmax_in_place", lambda: ttnn.softmax_in_place(a)),
    ("view", lambda: ttnn.view(a, [1, 64, 64])),
    ("split", lambda: ttnn.split(a, 32, dim=3)),
    ("chunk", lambda: ttnn.chunk(a, 2, 2)),
    ("topk_bf16", lambda: ttnn.topk(a, k=32)),
    ("topk_f32", lambda: ttnn.topk(f32, k=32)),
    ("getitem", lambda: batch[0]),
    ("pad_to_shape", lambda: ttnn.pad(rm, [1, 1, 64, 96], [0, 0, 0, 0], 0.0)),
    ("leaky_relu", lambda: ttnn.leaky_relu(a, 0.1)),
    ("relu6", lambda: ttnn.relu6(a)),
    ("floor", lambda: ttnn.floor(a)),
    ("clip", lambda: ttnn.clip(a, -1.0, 1.0)),
    ("tril", lambda: ttnn.tril(a)),
    ("cumsum", lambda: ttnn.cumsum(a, 3)),
    ("expand", lambda: ttnn.expand(mk((1, 1, 1, 64), ttnn.ROW_MAJOR_LAYOUT), [1, 1, 32, 64])),
    ("fill", lambda: ttnn.fill(a, 1.0)),
    ("logical_and", lambda: ttnn.logical_and(a, b)),
    ("lerp", lambda: ttnn.lerp(a, b, 0.5)),
    ("addcmul", lambda: ttnn.addcmul(a, b, b, value=0.5)),
    ("addcdiv", lambda: ttnn.addcdiv(a, b, b, value=0.5)),
    ("div", lambda: ttnn.div(a, b)),
    ("div_trunc", lambda: ttnn.div(a, 2.0, rounding_mode="trunc")),
    ("div_", lambda: ttnn.div_(a, b)),
    ("triu", lambda: ttnn.triu(a, diagonal=1)),
    ("hardswish", lambda: ttnn.hardswish(a)),
    ("hardsigmoid", lambda: ttnn.hardsigmoid(a)),
    ("mish", lambda: ttnn.mish(a)),
    ("swish", lambda: ttnn.swish(a)),
    ("softsign", lambda: ttnn.softsign(a)),
    ("erf", lambda: ttnn.erf(a)),
    ("erfinv", lambda: ttnn.erfinv(a)),
    ("expm1", lambda: ttnn.expm1(a)),
    ("log1p", lambda: ttnn.log1p(a)),
    ("sinh", lambda: ttnn.sinh(a)),
    ("cosh", lambda: ttnn.cosh(a)),
    ("tan", lambda: ttnn.tan(a)),
    ("atan", lambda: ttnn.atan(a)),
    ("ceil", lambda: ttnn.ceil(a)),
    ("sign", lambda: ttnn.sign(a)),
    ("round", lambda: ttnn.round(a, decimals=1)),
    ("identity", lambda: ttnn.identity(a)),
    ("isfinite", lambda: ttnn.isfinite(a)),
    ("logical_not", lambda: ttnn.logical_not(a)),
    ("logical_or", lambda: ttnn.logical_or(a, b)),
    ("logical_xor", lambda: ttnn.logical_xor(a, b)),
    ("softplus", lambda: ttnn.softplus(a, beta=1.0, threshold=20.0)),
    ("elu", lambda: ttnn.elu(a, alpha=1.0)),
    ("celu", lambda: ttnn.celu(a, alpha=1.0)),
    ("selu", lambda: ttnn.selu(a)),
    ("hardtanh", lambda: ttnn.hardtanh(a)),
    ("logit", lambda: ttnn.logit(a, eps=1e-6)),
    ("lerp_tensor_weight", lambda: ttnn.lerp(a, b, b)),
    ("split_row_major", lambda: ttnn.split(rm, [16, 48], 3)),
    ("rsub_", lambda: ttnn.rsub_(a, 1.0)),
    ("eq_", lambda: ttnn.eq_(a, b)),
    ("min_dim", lambda: ttnn.min(a, dim=-1, keepdim=True)),
    ("std", lambda: ttnn.std(a, dim=-1, keepdim=True)),
    ("var", lambda: ttnn.var(a, dim=3)),
    ("move", lambda: ttnn.move(mk((1, 1, 64, 64)))),  # the input is created in the call: move frees it
    ("global_avg_pool2d", lambda: ttnn.global_avg_pool2d(nhwc)),
    ("tilize_with_zero_padding", lambda: ttnn.tilize_with_zero_padding(rm_odd)),
]


def snap():
    return {(x.address, x.max_size_per_bank) for x in ttnn._ttnn.reports.get_buffers([dev])}


def describe(t):
    return {"address": t.buffer_address(), "shape": list(t.shape), "padded": list(t.padded_shape),
            "dtype": str(t.dtype), "layout": str(t.layout), "buffer_type": str(t.memory_config().buffer_type)}


out = {}
for name, call in CALLS:
    r = call()  # first call (program compile)
    del r
    gc.collect()
    before = snap()
    ttnn.graph.begin_graph_capture(ttnn.graph.RunMode.NORMAL)
    if hasattr(ttnn.graph, "disable_python_io_recording"):
        ttnn.graph.disable_python_io_recording()
    try:
        r = call()
        error = None
    except Exception as e:  # noqa: BLE001 - reported, not hidden
        r, error = None, str(e).splitlines()[0][:160]
    nodes = [[n["node_type"], n["params"].get("address"), n["params"].get("max_size_per_bank")]
             for n in ttnn.graph.end_graph_capture() if n["node_type"] in ("buffer_allocate", "buffer_deallocate")]
    outputs = [] if r is None else [describe(t) for t in (r if isinstance(r, (list, tuple)) else [r])]
    out[name] = {"outputs": outputs, "new_buffers": sorted(snap() - before), "graph": nodes, "error": error}
    del r
    gc.collect()

# reallocate: the input is freed first, so the tensor moves down into space freed below it
low, t = mk((1, 1, 64, 64)), mk((1, 1, 64, 64))
was, freed = t.buffer_address(), low.buffer_address()
ttnn.deallocate(low)
moved = ttnn.reallocate(t)
out["reallocate"] = {"was": was, "freed_below": freed, "now": moved.buffer_address(), "input_allocated": t.is_allocated()}

host = ttnn.Tensor([float(i) for i in range(12)], [1, 1, 3, 4], ttnn.float32, ttnn.ROW_MAJOR_LAYOUT)
out["host_methods"] = {
    "unpad": host.unpad([0, 0, 1, 1], [1, 1, 3, 3]).to_list(),
    "pad": host.pad([1, 1, 4, 6], [0, 0, 1, 1], -1.0).to_list(),
    "pad_shape": list(host.pad([1, 1, 4, 6], [0, 0, 1, 1], -1.0).shape),
    "unpad_from_tile": host.pad_to_tile(7.0).unpad_from_tile([1, 1, 2, 2]).to_list(),
    "arange": ttnn.arange(2, 11, 3, dtype=ttnn.int32).to_list(),
}
print("SEQ " + json.dumps(out))
ttnn.close_device(dev)
