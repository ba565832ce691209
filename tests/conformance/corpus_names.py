"""Corpus cases for the ops the emulator gained with ttnn 0.81.1's name surface: the in-place
binaries, the activations and roundings, the statistics, and the view, split and memory
ops. Appended to corpus.CORPUS when corpus.py is imported (it imports this module last).

Each family runs on the activations, norm inputs or reduction inputs corpus.py already
draws from model code (their file is each case's `source`), with the arguments the model
files that call the op pass; those files are named above each family.
"""

from __future__ import annotations

from cases import DRAM, L1, In
from corpus import (ACTIVATIONS, LLAMA_ATTN, LLAMA_GEN, LLAMA_MLP, LLAMA_MODEL, LLAMA_ROPE, NORM_INPUTS,
                    REDUCE_INPUTS, TT_CNN, WHISPER, YOLOV4, case)

SD_DEMO = "models/demos/wormhole/stable_diffusion/demo/demo.py"
RESNET = "models/demos/ttnn_resnet/tt/ttnn_functional_resnet50.py"
SAMPLING = "models/common/sampling/tt/tt_sampling.py"

# Ten activations per family (prefill-128's spec is llama8b-decode-dram's, longer).
TEN = [a for a in ACTIVATIONS if a[0] != "llama-prefill-128"]


def _tol(inp: In) -> float:
    return 0.1 if inp.dtype == "bfloat8_b" else 0.03


def _like(inp: In, values: str) -> In:
    return In(inp.shape, inp.dtype, inp.layout, inp.mem, values)


# --- in-place binaries ---------------------------------------------------------------------------
# Stable Diffusion's guidance step (sub_, mul_ by the guidance scale, add_: demo.py), ViT's
# score scaling (mul_ by 1/sqrt(head_size), then softmax_in_place), the Mamba and Falcon
# residual updates: A is overwritten and returned, B a tensor like A or a number.
IN_PLACE = {
    "add_": lambda t, a, b: a + b, "sub_": lambda t, a, b: a - b, "subtract_": lambda t, a, b: a - b,
    "mul_": lambda t, a, b: a * b, "multiply_": lambda t, a, b: a * b, "div_": lambda t, a, b: a / b,
    "divide_": lambda t, a, b: a / b, "rsub_": lambda t, a, b: b - a,
    "eq_": lambda t, a, b: (a == b).float(), "ne_": lambda t, a, b: (a != b).float(),
    "gt_": lambda t, a, b: (a > b).float(), "ge_": lambda t, a, b: (a >= b).float(),
    "lt_": lambda t, a, b: (a < b).float(), "le_": lambda t, a, b: (a <= b).float(),
    "ldexp_": lambda t, a, b: a * t.pow(2.0, b), "logaddexp_": lambda t, a, b: t.logaddexp(a, b),
    "logaddexp2_": lambda t, a, b: t.logaddexp2(a, b), "squared_difference_": lambda t, a, b: (a - b) ** 2,
    "bias_gelu_": lambda t, a, b: t.nn.functional.gelu(a + b),
    "logical_and_": lambda t, a, b: ((a != 0) & (b != 0)).float(),
    "logical_or_": lambda t, a, b: ((a != 0) | (b != 0)).float(),
    "logical_xor_": lambda t, a, b: ((a != 0) ^ (b != 0)).float(),
}
for op_name, ref in IN_PLACE.items():
    divides = op_name in ("div_", "divide_")
    for name, inp, source in TEN:
        other = _like(inp, "positive" if divides else "randn")
        case(f"ttnn.{op_name}", name, [inp, other],
             lambda c, a, b, op_name=op_name: getattr(c.ttnn, op_name)(a, b), source,
             lambda t, a, b, ref=ref: ref(t, a.float(), b.float()),
             tol=0.1 if inp.dtype == "bfloat8_b" or op_name == "ldexp_" else 0.03)
    case(f"ttnn.{op_name}", "scalar-dram", [In((1, 1, 32, 2048))],
         lambda c, a, op_name=op_name: getattr(c.ttnn, op_name)(a, 2.0), SD_DEMO,
         lambda t, a, ref=ref: ref(t, a.float(), t.tensor(2.0)))
for name, inp, source in TEN:
    case("ttnn.logical_not_", name, [inp], lambda c, a: c.ttnn.logical_not_(a), source,
         lambda t, a: (a.float() == 0).float())


# --- activations, roundings and element-wise math ------------------------------------------------
# YOLOv4's mish and leaky_relu (common.py, neck.py), MobileNet/EfficientNet hardswish and
# hardsigmoid, SpeechT5/HiFi-GAN leaky_relu(x, negative_slope), Stable Diffusion's and
# Mamba's softplus, swish in the UNet resnet blocks, relu6 in MobileNetV2, rounding in the
# sampling code, logical masks in the generator.
UNARY = {  # name: (call, torch reference, values)
    "atan": (lambda c, x: c.ttnn.atan(x), lambda t, x: t.atan(x), "randn"),
    "tan": (lambda c, x: c.ttnn.tan(x), lambda t, x: t.tan(x), "unit"),
    "sinh": (lambda c, x: c.ttnn.sinh(x), lambda t, x: t.sinh(x), "randn"),
    "cosh": (lambda c, x: c.ttnn.cosh(x), lambda t, x: t.cosh(x), "randn"),
    "ceil": (lambda c, x: c.ttnn.ceil(x), lambda t, x: t.ceil(x), "randn"),
    "floor": (lambda c, x: c.ttnn.floor(x), lambda t, x: t.floor(x), "randn"),
    "round": (lambda c, x: c.ttnn.round(x, decimals=0), lambda t, x: t.round(x), "randn"),
    "sign": (lambda c, x: c.ttnn.sign(x), lambda t, x: t.sign(x), "randn"),
    "erf": (lambda c, x: c.ttnn.erf(x), lambda t, x: t.erf(x), "randn"),
    "erfinv": (lambda c, x: c.ttnn.erfinv(x), lambda t, x: t.erfinv(x), "unit"),
    "expm1": (lambda c, x: c.ttnn.expm1(x), lambda t, x: t.expm1(x), "randn"),
    "log1p": (lambda c, x: c.ttnn.log1p(x), lambda t, x: t.log1p(x), "positive"),
    "logit": (lambda c, x: c.ttnn.logit(x), lambda t, x: t.logit(x), "unit"),
    "isfinite": (lambda c, x: c.ttnn.isfinite(x), lambda t, x: t.isfinite(x).float(), "randn"),
    "clip": (lambda c, x: c.ttnn.clip(x, -0.5, 0.5), lambda t, x: x.clamp(-0.5, 0.5), "randn"),
    "celu": (lambda c, x: c.ttnn.celu(x), lambda t, x: t.nn.functional.celu(x), "randn"),
    "elu": (lambda c, x: c.ttnn.elu(x, alpha=1.0), lambda t, x: t.nn.functional.elu(x), "randn"),
    "selu": (lambda c, x: c.ttnn.selu(x), lambda t, x: t.nn.functional.selu(x), "randn"),
    "leaky_relu": (lambda c, x: c.ttnn.leaky_relu(x, negative_slope=0.1),
                   lambda t, x: t.nn.functional.leaky_relu(x, 0.1), "randn"),
    "relu6": (lambda c, x: c.ttnn.relu6(x), lambda t, x: t.nn.functional.relu6(x), "randn"),
    "hardsigmoid": (lambda c, x: c.ttnn.hardsigmoid(x), lambda t, x: t.nn.functional.hardsigmoid(x), "randn"),
    "hardswish": (lambda c, x: c.ttnn.hardswish(x), lambda t, x: t.nn.functional.hardswish(x), "randn"),
    "hardtanh": (lambda c, x: c.ttnn.hardtanh(x), lambda t, x: t.nn.functional.hardtanh(x), "randn"),
    "mish": (lambda c, x: c.ttnn.mish(x), lambda t, x: t.nn.functional.mish(x), "randn"),
    "softplus": (lambda c, x: c.ttnn.softplus(x, beta=1.0, threshold=20.0),
                 lambda t, x: t.nn.functional.softplus(x), "randn"),
    "softsign": (lambda c, x: c.ttnn.softsign(x), lambda t, x: t.nn.functional.softsign(x), "randn"),
    "swish": (lambda c, x: c.ttnn.swish(x), lambda t, x: t.nn.functional.silu(x), "randn"),
    "identity": (lambda c, x: c.ttnn.identity(x), lambda t, x: x, "randn"),
    "logical_not": (lambda c, x: c.ttnn.logical_not(x), lambda t, x: (x == 0).float(), "randn"),
}
for op_name, (call, ref, values) in UNARY.items():
    for name, inp, source in TEN:
        case(f"ttnn.{op_name}", name, [_like(inp, values)], call, source,
             lambda t, x, ref=ref: ref(t, x.float()), _tol(inp))

BINARY = {
    "div": (lambda t, a, b: a / b, "positive"),
    "logical_and": (lambda t, a, b: ((a != 0) & (b != 0)).float(), "randn"),
    "logical_or": (lambda t, a, b: ((a != 0) | (b != 0)).float(), "randn"),
    "logical_xor": (lambda t, a, b: ((a != 0) ^ (b != 0)).float(), "randn"),
}
for op_name, (ref, values) in BINARY.items():
    for name, inp, source in TEN:
        case(f"ttnn.{op_name}", name, [inp, _like(inp, values)],
             lambda c, a, b, op_name=op_name: getattr(c.ttnn, op_name)(a, b), source,
             lambda t, a, b, ref=ref: ref(t, a.float(), b.float()), _tol(inp))

# Mamba's and the diffusion schedulers' ternaries: lerp(a, b, weight), addcmul/addcdiv(a, b, c, value=)
for name, inp, source in TEN:
    case("ttnn.lerp", name, [inp, _like(inp, "randn")], lambda c, a, b: c.ttnn.lerp(a, b, 0.25), source,
         lambda t, a, b: t.lerp(a.float(), b.float(), 0.25), _tol(inp))
    case("ttnn.addcmul", name, [inp, _like(inp, "randn"), _like(inp, "randn")],
         lambda c, a, b, d: c.ttnn.addcmul(a, b, d, value=0.5), source,
         lambda t, a, b, d: t.addcmul(a.float(), b.float(), d.float(), value=0.5), _tol(inp))
    case("ttnn.addcdiv", name, [inp, _like(inp, "randn"), _like(inp, "positive")],
         lambda c, a, b, d: c.ttnn.addcdiv(a, b, d, value=0.5), source,
         lambda t, a, b, d: t.addcdiv(a.float(), b.float(), d.float(), value=0.5), _tol(inp))


# --- statistics and reductions --------------------------------------------------------------------
# min over the vocab rows in sampling (tt_sampling.py), var/std for the group and layer
# norms written out by hand (Stable Diffusion, Whisper), cumsum over sorted probabilities
# for top-p, topk(k=32) over the logits, softmax_in_place over attention scores (ViT).
for name, inp, source in REDUCE_INPUTS:
    case("ttnn.min", name, [inp], lambda c, x: c.ttnn.min(x, dim=-1, keepdim=True), source,
         lambda t, x: x.float().amin(-1, keepdim=True))
    case("ttnn.var", name, [inp], lambda c, x: c.ttnn.var(x, dim=-1, keepdim=True), source,
         lambda t, x: x.float().var(-1, keepdim=True), 0.05)
    case("ttnn.std", name, [inp], lambda c, x: c.ttnn.std(x, dim=-1, keepdim=True), source,
         lambda t, x: x.float().std(-1, keepdim=True), 0.05)
    case("ttnn.cumsum", name, [inp], lambda c, x: c.ttnn.cumsum(x, -1), SAMPLING,
         lambda t, x: x.float().cumsum(-1), 0.05)
    case("ttnn.topk", name, [inp], lambda c, x: c.ttnn.topk(x, k=32, dim=-1, largest=True, sorted=True), SAMPLING,
         None)
for name, inp, source in NORM_INPUTS:
    case("ttnn.softmax_in_place", name, [inp], lambda c, x: c.ttnn.softmax_in_place(x), source,
         lambda t, x: t.softmax(x.float(), -1), _tol(inp))

# ResNet-50's and MobileNet's global pooling of the last [N, H, W, C] activation
for name, shape, layout, mem in [
    ("resnet50-7x7x2048", (1, 7, 7, 2048), "TILE", DRAM), ("resnet50-l1", (1, 7, 7, 512), "TILE", L1),
    ("resnet18-7x7x512", (1, 7, 7, 512), "TILE", DRAM), ("mobilenet-7x7x1280", (1, 7, 7, 1280), "TILE", DRAM),
    ("batch2", (2, 7, 7, 256), "TILE", DRAM), ("rm", (1, 7, 7, 256), "ROW_MAJOR", DRAM),
    ("rm-l1", (1, 8, 8, 128), "ROW_MAJOR", L1), ("14x14", (1, 14, 14, 256), "TILE", DRAM),
    ("4x4", (1, 4, 4, 1024), "TILE", DRAM), ("1x1", (1, 1, 1, 512), "TILE", DRAM),
]:
    case("ttnn.global_avg_pool2d", name, [In(shape, layout=layout, mem=mem)],
         lambda c, x: c.ttnn.global_avg_pool2d(x), RESNET, lambda t, x: x.float().mean((1, 2), keepdim=True))


# --- views, splits, masks and memory ops -----------------------------------------------------------
# view: tt_transformers' decode reshapes that keep the page layout ([1, 1, 32, dim] ->
# [1, 32, dim]), Whisper's heads, the ROW_MAJOR CNN activations folded to [N, H, W, C].
VIEWS = [
    ("decode-rank3", In((1, 1, 32, 2048)), (1, 32, 2048), LLAMA_MODEL),
    ("decode-l1", In((1, 1, 32, 4096), mem=L1), (1, 32, 4096), LLAMA_MODEL),
    ("prefill", In((1, 1, 128, 2048)), (1, 128, 2048), LLAMA_MODEL),
    ("rows-fold", In((1, 1, 128, 512)), (1, 4, 32, 512), LLAMA_ATTN),
    ("whisper", In((1, 1, 448, 384)), (1, 448, 384), WHISPER),
    ("cnn-rm", In((1, 1, 1024, 32), layout="ROW_MAJOR"), (1, 32, 32, 32), TT_CNN),
    ("cnn-rm-l1", In((1, 1, 256, 64), layout="ROW_MAJOR", mem=L1), (1, 16, 16, 64), TT_CNN),
    ("rm-flat", In((1, 32, 32, 16), layout="ROW_MAJOR"), (1, 1, 1024, 16), YOLOV4),
    ("f32", In((1, 1, 32, 128), "float32"), (32, 128), LLAMA_ROPE),
    ("tokens", In((1, 1, 1, 32), "uint32", "ROW_MAJOR", values="index:100"), (1, 32), LLAMA_GEN),
]
for name, inp, shape, source in VIEWS:
    case("ttnn.view", name, [inp], lambda c, x, shape=shape: c.ttnn.view(x, list(shape)), source,
         lambda t, x, shape=shape: x.reshape(shape))
    case("ttnn.experimental.view", name, [inp], lambda c, x, shape=shape: c.ttnn.experimental.view(x, list(shape)),
         source, lambda t, x, shape=shape: x.reshape(shape))

# expand: attention masks and position rows broadcast over heads and users
EXPANDS = [
    ("mask-heads", In((1, 1, 32, 128)), (1, 8, 32, 128), LLAMA_MODEL),
    ("mask-users", In((1, 1, 32, 256)), (4, 1, 32, 256), LLAMA_MODEL),
    ("rows", In((1, 1, 1, 256), layout="ROW_MAJOR"), (1, 1, 32, 256), LLAMA_ROPE),
    ("rows-l1", In((1, 1, 1, 128), layout="ROW_MAJOR", mem=L1), (1, 1, 32, 128), LLAMA_ROPE),
    ("cols", In((1, 1, 32, 1)), (1, 1, 32, 64), LLAMA_GEN),
    ("keep", In((1, 1, 32, 64)), (-1, 2, -1, -1), LLAMA_ATTN),
    ("whisper", In((1, 1, 1, 384), layout="ROW_MAJOR"), (1, 1, 64, 384), WHISPER),
    ("f32", In((1, 1, 32, 64), "float32"), (1, 4, 32, 64), LLAMA_ROPE),
    ("batch", In((1, 1, 64, 64)), (2, 2, 64, 64), LLAMA_ATTN),
    ("l1", In((1, 1, 32, 256), mem=L1), (1, 2, 32, 256), LLAMA_MODEL),
]
for name, inp, shape, source in EXPANDS:
    case("ttnn.expand", name, [inp], lambda c, x, shape=shape: c.ttnn.expand(x, list(shape)), source,
         lambda t, x, shape=shape: x.expand(shape))

# split / chunk: fused QKV and gate/up projections cut along the last dim (attention.py,
# mlp.py), Whisper's heads, YOLOv4's CSP halves along channels.
SPLITS = [
    ("qkv-1b", In((1, 1, 32, 3072)), 1024, 3, 3, LLAMA_ATTN),
    ("qkv-l1", In((1, 1, 32, 1536), mem=L1), 512, 3, 3, LLAMA_ATTN),
    ("gate-up", In((1, 1, 32, 4096)), 2048, 3, 2, LLAMA_MLP),
    ("prefill-qkv", In((1, 1, 128, 1536)), 512, 3, 3, LLAMA_ATTN),
    ("whisper-kv", In((1, 1, 448, 768)), 384, 3, 2, WHISPER),
    ("rows", In((1, 1, 128, 256)), 64, 2, 2, LLAMA_MODEL),
    ("heads", In((1, 8, 32, 64)), 4, 1, 2, LLAMA_ATTN),
    ("yolo-csp", In((1, 1, 1024, 64)), 32, 3, 2, YOLOV4),
    ("rm", In((1, 1, 32, 256), layout="ROW_MAJOR"), 128, 3, 2, LLAMA_MLP),
    ("f32", In((1, 1, 32, 256), "float32"), 128, 3, 2, LLAMA_ROPE),
]
for name, inp, size, dim, chunks, source in SPLITS:
    case("ttnn.split", name, [inp], lambda c, x, size=size, dim=dim: c.ttnn.split(x, size, dim), source,
         lambda t, x, size=size, dim=dim: list(t.split(x, size, dim)))
    case("ttnn.chunk", name, [inp], lambda c, x, chunks=chunks, dim=dim: c.ttnn.chunk(x, chunks, dim), source,
         lambda t, x, chunks=chunks, dim=dim: list(t.chunk(x, chunks, dim)))

# tril / triu: causal masks built on device (model.py's prefill masks, Whisper's decoder)
for name, inp, diagonal, source in [
    ("mask-32", In((1, 1, 32, 32)), 0, LLAMA_MODEL), ("mask-128", In((1, 1, 128, 128)), 0, LLAMA_MODEL),
    ("mask-256-l1", In((1, 1, 256, 256), mem=L1), 0, LLAMA_MODEL), ("whisper-448", In((1, 1, 448, 448)), 0, WHISPER),
    ("diag1", In((1, 1, 64, 64)), 1, LLAMA_MODEL), ("diag-neg", In((1, 1, 64, 64)), -1, LLAMA_MODEL),
    ("heads", In((1, 8, 32, 32)), 0, LLAMA_ATTN), ("f32", In((1, 1, 32, 32), "float32"), 0, LLAMA_MODEL),
    ("rect", In((1, 1, 32, 128)), 0, LLAMA_ATTN), ("batch", In((2, 1, 64, 64)), 0, LLAMA_MODEL),
]:
    for op_name in ("tril", "triu"):
        case(f"ttnn.{op_name}", name, [inp],
             lambda c, x, op_name=op_name, d=diagonal: getattr(c.ttnn, op_name)(x, diagonal=d), source,
             lambda t, x, op_name=op_name, d=diagonal: getattr(t, op_name)(x.float(), diagonal=d))

# arange: positions and rope indices made on device (rope.py, generator.py, Whisper)
for name, start, end, step, dtype, layout, mem, source in [
    ("positions-32", 0, 32, 1, "bfloat16", "ROW_MAJOR", DRAM, LLAMA_GEN),
    ("positions-128", 0, 128, 1, "bfloat16", "ROW_MAJOR", DRAM, LLAMA_ROPE),
    ("int32", 0, 64, 1, "int32", "ROW_MAJOR", DRAM, LLAMA_GEN),
    ("uint32", 0, 32, 1, "uint32", "ROW_MAJOR", DRAM, LLAMA_GEN),
    ("step2", 0, 128, 2, "bfloat16", "ROW_MAJOR", DRAM, LLAMA_ROPE),
    ("offset", 16, 48, 1, "bfloat16", "ROW_MAJOR", DRAM, LLAMA_GEN),
    ("l1", 0, 64, 1, "bfloat16", "ROW_MAJOR", L1, LLAMA_GEN),
    ("f32", 0, 64, 1, "float32", "ROW_MAJOR", DRAM, LLAMA_ROPE),
    ("tile", 0, 32, 1, "bfloat16", "TILE", DRAM, LLAMA_GEN),
    ("whisper-448", 0, 448, 1, "bfloat16", "ROW_MAJOR", DRAM, WHISPER),
]:
    case("ttnn.arange", name, [],
         lambda c, s=start, e=end, st=step, dt=dtype, lay=layout, mem=mem: c.ttnn.arange(
             s, e, st, dtype=getattr(c.ttnn, dt), device=c.device, layout=getattr(c.ttnn, f"{lay}_LAYOUT"),
             memory_config=c.mem(mem)), source, None)

# fill: a persistent tensor reset on device (the generator's masks and counters);
# move / reallocate: the defragmenting copy tt_transformers, YOLOv4 and UNet call after
# freeing big intermediates (the input is freed, the output allocated again).
for name, inp, source in TEN:
    case("ttnn.fill", name, [inp], lambda c, x: c.ttnn.fill(x, 0.5), source, lambda t, x: t.full_like(x.float(), 0.5))
    case("ttnn.move", name, [inp], lambda c, x: c.ttnn.move(x), source, lambda t, x: x)
    case("ttnn.reallocate", name, [inp], lambda c, x: c.ttnn.reallocate(x), source, lambda t, x: x)

# tilize_with_zero_padding: CNN activations whose rows are not a tile multiple (ResNet's 7x7
# stage, YOLOv4's 10x10 head, a single token row)
for name, shape, dtype, mem, source in [
    ("resnet-7x7", (1, 1, 49, 64), "bfloat16", DRAM, RESNET), ("resnet-7x7x512", (1, 1, 49, 512), "bfloat16", DRAM, RESNET),
    ("yolo-10x10", (1, 1, 100, 128), "bfloat16", DRAM, YOLOV4), ("token", (1, 1, 1, 256), "bfloat16", DRAM, LLAMA_MODEL),
    ("l1", (1, 1, 49, 64), "bfloat16", L1, TT_CNN), ("aligned", (1, 1, 64, 64), "bfloat16", DRAM, TT_CNN),
    ("f32", (1, 1, 7, 128), "float32", DRAM, LLAMA_ROPE), ("rank3", (1, 7, 256), "bfloat16", DRAM, LLAMA_MODEL),
    ("batch", (2, 1, 25, 64), "bfloat16", DRAM, TT_CNN), ("whisper-rows", (1, 1, 1500, 64), "bfloat16", DRAM, WHISPER),
]:
    case("ttnn.tilize_with_zero_padding", name, [In(shape, dtype, "ROW_MAJOR", mem)],
         lambda c, x: c.ttnn.tilize_with_zero_padding(x), source, lambda t, x: x)

