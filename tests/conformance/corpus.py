"""The conformance corpus: every emulated op called with arguments taken from tt-metal's model
code (each group of cases names the upstream file, in tenstorrent/tt-metal, it comes from).

Shapes are the models' own (Llama-3.1-8B / 3.2-1B in tt_transformers, Whisper, YOLOv4,
ResNet-50, the tt_cnn executors) scaled down only where a batch dimension would make the
emulator slow; memory configs are the ones those files build (DRAM and L1 interleaved,
height/width/block sharded in L1, DRAM width-sharded weights).
"""

from __future__ import annotations

from typing import Any

from cases import DRAM, L1, Case, In, block, height, width

TT_TRANSFORMERS = "models/tt_transformers/tt"
LLAMA_ATTN = f"{TT_TRANSFORMERS}/attention.py"
LLAMA_MLP = f"{TT_TRANSFORMERS}/mlp.py"
LLAMA_MODEL = f"{TT_TRANSFORMERS}/model.py"
LLAMA_EMBD = f"{TT_TRANSFORMERS}/embedding.py"
LLAMA_NORM = f"{TT_TRANSFORMERS}/distributed_norm.py"
LLAMA_DECODER = f"{TT_TRANSFORMERS}/decoder.py"
LLAMA_ROPE = f"{TT_TRANSFORMERS}/rope.py"
LLAMA_HEAD = f"{TT_TRANSFORMERS}/lm_head.py"
LLAMA_GEN = f"{TT_TRANSFORMERS}/generator.py"
LLAMA_COMMON = f"{TT_TRANSFORMERS}/common.py"
TT_CNN = "models/tt_cnn/tt/builder.py"
TT_CNN_EXEC = "models/tt_cnn/tt/executor.py"
YOLOV4 = "models/demos/yolov4/tt/common.py"
YOLOV4_DS1 = "models/demos/yolov4/tt/downsample1.py"
YOLOV4_NECK = "models/demos/yolov4/tt/neck.py"
WHISPER = "models/demos/whisper/tt/ttnn_optimized_functional_whisper.py"

CORPUS: list[Case] = []


def case(op: str, name: str, inputs: list[In], call: Any, source: str, ref: Any = None, tol: float = 0.03) -> None:
    CORPUS.append(Case(op, name, tuple(inputs), call, source, ref, tol))


def device_params(op: str) -> dict[str, Any]:
    """open_device arguments for an op's cases (conv and pool need l1_small, as the CNN
    models open their device with it)."""
    if op in ("ttnn.conv2d", "ttnn.max_pool2d", "ttnn.upsample", "scenario.trace_input_realloc"):
        return {"l1_small_size": 24576, "trace_region_size": 1 << 20}
    return {"trace_region_size": 1 << 20}


def _same(torch: Any, x: Any) -> Any:
    return x


# --- tilize / untilize ---------------------------------------------------------------------
# tt_cnn builds L1 height-sharded ROW_MAJOR activations and tilizes them in place of their
# sharding (builder.py); YOLOv4's first layers do the same on [1, 1, N·H·W, C] inputs.
for name, shape, mem in [
    ("cnn-hs-8x64x32", (1, 1, 512, 32), height(8, 64, 32)),
    ("cnn-hs-4x128x64", (1, 1, 512, 64), height(4, 128, 64)),
    ("yolo-hs-16", (1, 1, 1024, 32), height(16, 64, 32)),
    ("cnn-dram", (1, 1, 512, 32), DRAM),
    ("cnn-l1", (1, 1, 256, 64), L1),
]:
    case("ttnn.tilize", name, [In(shape, layout="ROW_MAJOR", mem=mem)], lambda c, x: c.ttnn.tilize(x), TT_CNN, _same)
    case("ttnn.untilize", name, [In(shape, mem=mem)], lambda c, x: c.ttnn.untilize(x), TT_CNN, _same)


# --- embedding -----------------------------------------------------------------------------
# tt_transformers decode: tokens [1, 1, 1, 32] uint32 ROW_MAJOR, embedding table [vocab, dim]
# bf16 ROW_MAJOR, output TILE then unsqueeze_to_4D (embedding.py, model.py).
def _embed_ref(torch: Any, ids: Any, table: Any) -> Any:
    return table[ids.long().reshape(ids.shape[0] if ids.dim() == 2 else 1, -1)].unsqueeze(1)


for name, ids_shape, vocab, dim, layout in [
    ("decode-1x1x1x32", (1, 1, 1, 32), 512, 256, "TILE"),
    ("decode-1x32", (1, 32), 512, 256, "TILE"),
    ("prefill-1x128", (1, 128), 512, 256, "TILE"),
    ("decode-1x1x1x32-rm", (1, 1, 1, 32), 512, 128, "ROW_MAJOR"),
]:
    lay = layout
    case(
        "ttnn.embedding", name,
        [In(ids_shape, "uint32", "ROW_MAJOR", values=f"index:{vocab}"), In((vocab, dim), layout="ROW_MAJOR")],
        lambda c, ids, table, lay=lay: c.ttnn.embedding(ids, table, layout=getattr(c.ttnn, f"{lay}_LAYOUT")),
        LLAMA_EMBD,
    )


# --- conv2d with deallocate_activation -----------------------------------------------------
def _conv(c: Any, x: Any, w: Any, *, n: int, h: int, wd: int, cin: int, cout: int, k: int, s: int, p: int, dealloc: bool) -> Any:
    ttnn = c.ttnn
    config = ttnn.Conv2dConfig(weights_dtype=ttnn.bfloat16, deallocate_activation=dealloc)
    return ttnn.conv2d(
        input_tensor=x, weight_tensor=w, device=c.device, in_channels=cin, out_channels=cout, batch_size=n,
        input_height=h, input_width=wd, kernel_size=(k, k), stride=(s, s), padding=(p, p), conv_config=config,
    )


for name, (n, h, wd, cin, cout, k, s, p), mem, dealloc in [
    ("yolo-ds1-conv1-dealloc", (1, 32, 32, 16, 32, 3, 1, 1), DRAM, True),
    ("yolo-ds1-conv1", (1, 32, 32, 16, 32, 3, 1, 1), DRAM, False),
    ("cnn-1x1-dealloc", (1, 16, 32, 32, 64, 1, 1, 0), DRAM, True),
    ("cnn-1x1-l1-dealloc", (1, 16, 32, 32, 64, 1, 1, 0), L1, True),
]:
    args = dict(n=n, h=h, wd=wd, cin=cin, cout=cout, k=k, s=s, p=p, dealloc=dealloc)
    case(
        "ttnn.conv2d", name,
        [In((1, 1, n * h * wd, cin), layout="ROW_MAJOR", mem=mem), In((cout, cin, k, k), "float32", "ROW_MAJOR", mem=None)],
        lambda c, x, w, args=args: _conv(c, x, w, **args), YOLOV4_DS1,
    )


# --- the traced executors' L1 input: freed and allocated again at the captured address -------
def _realloc_in_capture(c: Any, dram: Any, *, cfg: Any, ops: str) -> Any:
    """tt_cnn's TracedModelExecutor: reshard the DRAM input into L1, remember its address
    and spec, begin a capture, run the model (outside the capture here: ops inside one crash
    the mock device), free the L1 input, allocate it again from its spec."""
    ttnn = c.ttnn
    l1 = ttnn.reshard(dram, c.mem(cfg)) if dram.is_sharded() else ttnn.interleaved_to_sharded(dram, c.mem(cfg))
    spec = l1.spec
    outs = []
    if "tilize" in ops:
        outs.append(ttnn.tilize(l1))
    tid = ttnn.begin_trace_capture(c.device, cq_id=0)
    ttnn.deallocate(l1)
    again = ttnn.allocate_tensor_on_device(spec, c.device)
    ttnn.end_trace_capture(c.device, tid, cq_id=0)
    ttnn.release_trace(c.device, tid)
    return [again, *outs]


for name, cfg, ops in [
    ("hs-8-plain", height(8, 64, 32), ""),
    ("hs-8-tilize", height(8, 64, 32), "tilize"),
    ("hs-4-tilize", height(4, 128, 32), "tilize"),
]:
    case(
        "scenario.trace_input_realloc", name, [In((1, 1, 512, 32), layout="ROW_MAJOR", mem=DRAM)],
        lambda c, x, cfg=cfg, ops=ops: _realloc_in_capture(c, x, cfg=cfg, ops=ops), TT_CNN_EXEC,
    )


# --- element-wise ops ------------------------------------------------------------------------
# The activations those ops see in the models: decode residuals of Llama-3.1-8B and 3.2-1B
# (DRAM, L1, L1 width-sharded as decoder.py's residual memcfg), the MLP's wide activations
# (mlp.py, bfloat8_b too), a prefill chunk, Whisper's encoder rows, YOLOv4 and ResNet-50
# height-sharded activations, a UNet-style block-sharded one, and float32 rope/sampling rows.
ACTIVATIONS: list[tuple[str, In, str]] = [
    ("llama8b-decode-dram", In((1, 1, 32, 4096)), LLAMA_DECODER),
    ("llama8b-decode-l1-ws", In((1, 1, 32, 4096), mem=width(32, 32, 128)), LLAMA_DECODER),
    ("llama1b-decode-l1", In((1, 1, 32, 2048), mem=L1), LLAMA_DECODER),
    ("llama1b-mlp-ws", In((1, 1, 32, 8192), mem=width(64, 32, 128)), LLAMA_MLP),
    ("llama-mlp-bfp8", In((1, 1, 32, 3584), "bfloat8_b"), LLAMA_MLP),
    ("llama-prefill-128", In((1, 1, 128, 2048)), LLAMA_MLP),
    ("whisper-encoder", In((1, 1, 448, 384), mem=L1), WHISPER),
    ("yolo-hs", In((1, 1, 1024, 32), mem=height(8, 128, 32)), YOLOV4),
    ("resnet-hs", In((1, 1, 3136, 64), mem=height(49, 64, 64)), "models/demos/ttnn_resnet/tt/ttnn_functional_resnet50.py"),
    ("unet-bs", In((1, 1, 256, 256), mem=block(4, 4, 64, 64)), "models/experimental/functional_unet/tt/unet_shallow_ttnn.py"),
    ("rope-f32", In((1, 1, 32, 128), "float32"), LLAMA_ROPE),
]

UNARY = {
    "relu": lambda t, x: t.relu(x), "gelu": lambda t, x: t.nn.functional.gelu(x),
    "silu": lambda t, x: t.nn.functional.silu(x), "exp": lambda t, x: t.exp(x),
    "neg": lambda t, x: -x, "sigmoid": lambda t, x: t.sigmoid(x), "tanh": lambda t, x: t.tanh(x),
    "abs": lambda t, x: t.abs(x), "cos": lambda t, x: t.cos(x), "sin": lambda t, x: t.sin(x),
    "square": lambda t, x: x * x,
}
POSITIVE_UNARY = {
    "sqrt": lambda t, x: t.sqrt(x), "rsqrt": lambda t, x: t.rsqrt(x), "log": lambda t, x: t.log(x),
    "reciprocal": lambda t, x: 1 / x,
}
for op_name, ref in {**UNARY, **POSITIVE_UNARY}.items():
    positive = op_name in POSITIVE_UNARY
    for name, inp, source in ACTIVATIONS:
        if positive:
            inp = In(inp.shape, inp.dtype, inp.layout, inp.mem, "positive")
        case(f"ttnn.{op_name}", name, [inp], lambda c, x, op_name=op_name: getattr(c.ttnn, op_name)(x), source,
             lambda t, x, ref=ref: ref(t, x.float()), tol=0.1 if inp.dtype == "bfloat8_b" else 0.03)

BINARY = {
    "add": lambda t, a, b: a + b, "subtract": lambda t, a, b: a - b, "multiply": lambda t, a, b: a * b,
    "maximum": lambda t, a, b: t.maximum(a, b), "minimum": lambda t, a, b: t.minimum(a, b),
    "eq": lambda t, a, b: (a == b).float(), "ne": lambda t, a, b: (a != b).float(),
    "gt": lambda t, a, b: (a > b).float(), "lt": lambda t, a, b: (a < b).float(),
    "ge": lambda t, a, b: (a >= b).float(), "le": lambda t, a, b: (a <= b).float(),
    "divide": lambda t, a, b: a / b,
}
for op_name, ref in BINARY.items():
    for name, inp, source in ACTIVATIONS:
        other = In(inp.shape, inp.dtype, inp.layout, inp.mem, "positive" if op_name == "divide" else "randn")
        case(f"ttnn.{op_name}", name, [inp, other], lambda c, a, b, op_name=op_name: getattr(c.ttnn, op_name)(a, b),
             source, lambda t, a, b, ref=ref: ref(t, a.float(), b.float()), tol=0.1 if inp.dtype == "bfloat8_b" else 0.03)
    # the scalar operand form (decode: x * scale, residual + bias constant), and memory_config=
    case(f"ttnn.{op_name}", "scalar-dram", [In((1, 1, 32, 2048))],
         lambda c, a, op_name=op_name: getattr(c.ttnn, op_name)(a, 2.0), LLAMA_ATTN,
         lambda t, a, ref=ref: ref(t, a.float(), t.tensor(2.0)))
    case(f"ttnn.{op_name}", "to-l1", [In((1, 1, 32, 2048)), In((1, 1, 32, 2048))],
         lambda c, a, b, op_name=op_name: getattr(c.ttnn, op_name)(a, b, memory_config=c.ttnn.L1_MEMORY_CONFIG),
         LLAMA_MLP, None)


# --- normalization and softmax ---------------------------------------------------------------
# rms_norm of decode residuals and prefill rows with the gamma as a ROW_MAJOR [1, 1, dim/32, 32]
# weight (distributed_norm.py / common's RMSNorm), layer_norm in Whisper, softmax of attention
# scores (Whisper, the non-fused attention paths).
def _gamma(dim: int) -> In:
    return In((1, 1, dim // 32, 32), layout="ROW_MAJOR", values="positive")


def _rms_ref(torch: Any, x: Any, g: Any) -> Any:
    x = x.float()
    return x * torch.rsqrt((x * x).mean(-1, keepdim=True) + 1e-5) * g.float().reshape(-1)


def _ln_ref(torch: Any, x: Any, g: Any, b: Any) -> Any:
    return torch.nn.functional.layer_norm(x.float(), (x.shape[-1],), g.float().reshape(-1), b.float().reshape(-1), 1e-5)


NORM_INPUTS = [
    ("llama8b-decode", In((1, 1, 32, 4096)), LLAMA_NORM),
    ("llama1b-decode-l1", In((1, 1, 32, 2048), mem=L1), LLAMA_NORM),
    ("llama1b-prefill", In((1, 1, 128, 2048)), LLAMA_NORM),
    ("llama1b-prefill-256", In((1, 1, 256, 2048)), LLAMA_NORM),
    ("whisper-enc", In((1, 1, 448, 384)), WHISPER),
    ("whisper-dec-l1", In((1, 1, 32, 384), mem=L1), WHISPER),
    ("qk-norm", In((1, 1, 32, 128)), LLAMA_ATTN),
    ("f32", In((1, 1, 32, 1024), "float32"), LLAMA_NORM),
    ("bfp8", In((1, 1, 32, 1024), "bfloat8_b"), LLAMA_NORM),
    ("batch8", In((8, 1, 32, 512)), LLAMA_NORM),
]
for name, inp, source in NORM_INPUTS:
    dim = inp.shape[-1]
    tol = 0.1 if inp.dtype == "bfloat8_b" else 0.03
    case("ttnn.rms_norm", name, [inp, _gamma(dim)], lambda c, x, g: c.ttnn.rms_norm(x, epsilon=1e-5, weight=g), source,
         _rms_ref, tol)
    case("ttnn.layer_norm", name, [inp, _gamma(dim), In(_gamma(dim).shape, layout="ROW_MAJOR")],
         lambda c, x, g, b: c.ttnn.layer_norm(x, epsilon=1e-5, weight=g, bias=b), source, _ln_ref, tol)
    case("ttnn.softmax", name, [inp], lambda c, x: c.ttnn.softmax(x, dim=-1), source,
         lambda t, x: t.softmax(x.float(), -1), tol)
case("ttnn.rms_norm", "to-l1", [In((1, 1, 32, 2048)), _gamma(2048)],
     lambda c, x, g: c.ttnn.rms_norm(x, epsilon=1e-5, weight=g, memory_config=c.ttnn.L1_MEMORY_CONFIG), LLAMA_NORM,
     _rms_ref)
case("ttnn.softmax", "to-l1", [In((1, 8, 32, 128))],
     lambda c, x: c.ttnn.softmax(x, dim=-1, memory_config=c.ttnn.L1_MEMORY_CONFIG), WHISPER,
     lambda t, x: t.softmax(x.float(), -1))


# --- reductions ---------------------------------------------------------------------------------
# sampling and pooling reductions: argmax over the vocab rows (generator.py's on-device
# sampling), mean/sum/max over the last dim (Whisper pooling, sampling's max).
REDUCE_INPUTS = [
    ("decode-logits", In((1, 1, 32, 1024)), LLAMA_GEN),
    ("decode-logits-l1", In((1, 1, 32, 2048), mem=L1), LLAMA_GEN),
    ("prefill", In((1, 1, 128, 512)), LLAMA_GEN),
    ("whisper", In((1, 1, 448, 384)), WHISPER),
    ("f32", In((1, 1, 32, 256), "float32"), LLAMA_GEN),
    ("square-64", In((64, 64)), "models/tt_transformers/tt/generator.py"),
    ("batch4", In((4, 1, 32, 256)), LLAMA_GEN),
    ("rows-96", In((1, 1, 96, 320)), WHISPER),
    ("heads", In((1, 8, 32, 64)), LLAMA_ATTN),
    ("wide", In((1, 1, 32, 4096)), LLAMA_GEN),
]
for name, inp, source in REDUCE_INPUTS:
    for op_name, ref in [("sum", lambda t, x: x.float().sum(-1, keepdim=True)),
                         ("mean", lambda t, x: x.float().mean(-1, keepdim=True)),
                         ("max", lambda t, x: x.float().amax(-1, keepdim=True))]:
        case(f"ttnn.{op_name}", name, [inp], lambda c, x, op_name=op_name: getattr(c.ttnn, op_name)(x, dim=-1, keepdim=True),
             source, ref)
    case("ttnn.argmax", name, [In(inp.shape, inp.dtype, "ROW_MAJOR", inp.mem)],
         lambda c, x: c.ttnn.argmax(x, dim=-1, keepdim=True), source, None)


# --- matmul / linear ----------------------------------------------------------------------------
# Llama-3.2-1B decode and prefill projections (attention.py wqkv/wo, mlp.py w1/w2/w3, lm_head.py),
# Whisper's projections; outputs in DRAM, L1 or as the input says; linear with bias and an
# activation; bfloat8_b weights as tt_transformers stores them.
MATMULS = [
    ("decode-qkv", (1, 1, 32, 2048), (2048, 3072), "bfloat8_b", None, LLAMA_ATTN),
    ("decode-wo", (1, 1, 32, 2048), (2048, 2048), "bfloat8_b", None, LLAMA_ATTN),
    ("decode-w1", (1, 1, 32, 2048), (2048, 8192), "bfloat8_b", None, LLAMA_MLP),
    ("decode-w2", (1, 1, 32, 8192), (8192, 2048), "bfloat8_b", None, LLAMA_MLP),
    ("prefill-w1", (1, 1, 128, 2048), (2048, 1024), "bfloat16", None, LLAMA_MLP),
    ("decode-l1", (1, 1, 32, 2048), (2048, 1024), "bfloat16", "L1", LLAMA_ATTN),
    ("whisper-q", (1, 1, 448, 384), (384, 384), "bfloat16", None, WHISPER),
    ("whisper-fc1", (1, 1, 448, 384), (384, 1536), "bfloat16", None, WHISPER),
    ("lm-head-split", (1, 1, 32, 2048), (2048, 4096), "bfloat8_b", "DRAM", LLAMA_HEAD),
    ("scores", (1, 8, 32, 64), (1, 8, 64, 128), "bfloat16", None, LLAMA_ATTN),
]
for name, a, b, wdtype, out_mem, source in MATMULS:
    mem = out_mem
    tol = 0.1 if wdtype == "bfloat8_b" else 0.04

    def _mm(c: Any, x: Any, w: Any, mem: Any = mem) -> Any:
        kw = {} if mem is None else {"memory_config": getattr(c.ttnn, f"{mem}_MEMORY_CONFIG")}
        return c.ttnn.matmul(x, w, **kw)

    def _lin(c: Any, x: Any, w: Any, bias: Any, mem: Any = mem) -> Any:
        kw = {} if mem is None else {"memory_config": getattr(c.ttnn, f"{mem}_MEMORY_CONFIG")}
        return c.ttnn.linear(x, w, bias=bias, **kw)

    case("ttnn.matmul", name, [In(a), In(b, wdtype)], _mm, source, lambda t, x, w: x.float() @ w.float(), tol)
    if len(b) == 2:
        case("ttnn.linear", name, [In(a), In(b, wdtype), In((1, b[-1]))], _lin, source,
             lambda t, x, w, bias: x.float() @ w.float() + bias.float().reshape(-1), tol)
case("ttnn.linear", "whisper-fc1-gelu", [In((1, 1, 448, 384)), In((384, 1536))],
     lambda c, x, w: c.ttnn.linear(x, w, activation="gelu"), WHISPER,
     lambda t, x, w: t.nn.functional.gelu(x.float() @ w.float()), 0.05)


# --- shape and layout ops -------------------------------------------------------------------
# reshape/permute/transpose/concat/slice as tt_transformers' attention and model.py use them
# (heads, KV slices, last-token slicing for prefill), Whisper's head split, YOLOv4's neck
# concatenations; to_layout/typecast/clone/copy as the generator moves logits and positions.
SHAPES = [
    ("decode-4096", In((1, 1, 32, 4096)), LLAMA_ATTN),
    ("decode-2048-l1", In((1, 1, 32, 2048), mem=L1), LLAMA_ATTN),
    ("prefill-128", In((1, 1, 128, 1024)), LLAMA_MODEL),
    ("heads-8x32x64", In((1, 8, 32, 64)), LLAMA_ATTN),
    ("whisper-448", In((1, 1, 448, 384)), WHISPER),
    ("yolo-1024x64", In((1, 1, 1024, 64)), YOLOV4_NECK),
    ("rm-32x256", In((1, 1, 32, 256), layout="ROW_MAJOR"), LLAMA_GEN),
    ("rm-l1", In((1, 1, 64, 128), layout="ROW_MAJOR", mem=L1), LLAMA_GEN),
    ("f32", In((1, 1, 32, 128), "float32"), LLAMA_ROPE),
    ("batch2", In((2, 1, 64, 256)), WHISPER),
]
for name, inp, source in SHAPES:
    n, c_, h, w = inp.shape
    case("ttnn.reshape", name, [inp], lambda c, x, s=(n, c_ * h, w // 2, 2 * 1) if False else (n * c_, 1, h, w): c.ttnn.reshape(x, s),
         source, lambda t, x, s=(n * c_, 1, h, w): x.reshape(s))
    case("ttnn.permute", name, [inp], lambda c, x: c.ttnn.permute(x, (0, 2, 1, 3)), source,
         lambda t, x: x.permute(0, 2, 1, 3))
    case("ttnn.transpose", name, [inp], lambda c, x: c.ttnn.transpose(x, -2, -1), source, lambda t, x: x.transpose(-2, -1))
    case("ttnn.concat", name, [inp, inp], lambda c, a, b: c.ttnn.concat([a, b], dim=3), source,
         lambda t, a, b: t.cat([a, b], 3))
    case("ttnn.slice", name, [inp], lambda c, x, e=(n, c_, h, w // 2): c.ttnn.slice(x, [0, 0, 0, 0], list(e)), source,
         lambda t, x, e=(n, c_, h, w // 2): x[: e[0], : e[1], : e[2], : e[3]])
    other = "ROW_MAJOR" if inp.layout == "TILE" else "TILE"
    case("ttnn.to_layout", name, [inp], lambda c, x, o=other: c.ttnn.to_layout(x, getattr(c.ttnn, f"{o}_LAYOUT")), source, _same)
    case("ttnn.clone", name, [inp], lambda c, x: c.ttnn.clone(x), source, _same)
    case("ttnn.copy", name, [inp, In(inp.shape, inp.dtype, inp.layout, inp.mem, "zeros")],
         lambda c, a, b: c.ttnn.copy(a, b), source, None)
    if inp.layout == "TILE":
        to = "float32" if inp.dtype == "bfloat16" else "bfloat16"
        case("ttnn.typecast", name, [inp], lambda c, x, to=to: c.ttnn.typecast(x, getattr(c.ttnn, to)), source, _same)
        case("ttnn.clamp", name, [inp], lambda c, x: c.ttnn.clamp(x, min=-0.5, max=0.5), source,
             lambda t, x: x.float().clamp(-0.5, 0.5))
        case("ttnn.where", name, [inp, inp, In(inp.shape, inp.dtype, inp.layout, inp.mem, "zeros")],
             lambda c, cond, a, b: c.ttnn.where(cond, a, b), source,
             lambda t, cond, a, b: t.where(cond != 0, a.float(), b.float()))
        case("ttnn.pow", name, [inp], lambda c, x: c.ttnn.pow(x, 2.0), source, lambda t, x: x.float() ** 2)
        case("ttnn.repeat", name, [inp], lambda c, x: c.ttnn.repeat(x, [1, 1, 1, 2]), source, lambda t, x: x.repeat(1, 1, 1, 2))
        case("ttnn.repeat_interleave", name, [inp], lambda c, x: c.ttnn.repeat_interleave(x, 2, dim=1), source,
             lambda t, x: x.repeat_interleave(2, dim=1))
        case("ttnn.pad", name, [inp], lambda c, x: c.ttnn.pad(x, [(0, 0), (0, 0), (0, 0), (0, 32)], 0.0), source,
             lambda t, x: t.nn.functional.pad(x.float(), (0, 32)))
        case("ttnn.untilize_with_unpadding", name, [inp],
             lambda c, x, e=(n - 1, c_ - 1, h - 1, w // 2 - 1): c.ttnn.untilize_with_unpadding(x, list(e)), source,
             lambda t, x, e=(n, c_, h, w // 2): x[: e[0], : e[1], : e[2], : e[3]])
    case("ttnn.unsqueeze", name, [inp], lambda c, x: c.ttnn.unsqueeze(x, 0), source, lambda t, x: x.unsqueeze(0))
    case("ttnn.squeeze", name, [inp], lambda c, x: c.ttnn.squeeze(x, 1) if x.shape[1] == 1 else c.ttnn.squeeze(x, 0),
         source, lambda t, x: x.squeeze(1) if x.shape[1] == 1 else x.squeeze(0))
    case("ttnn.unsqueeze_to_4D", name, [In(inp.shape[1:], inp.dtype, inp.layout, inp.mem)],
         lambda c, x: c.ttnn.unsqueeze_to_4D(x), source, lambda t, x: x.reshape(1, *x.shape))
for name, inp, source in SHAPES:
    if inp.layout == "ROW_MAJOR" and inp.dtype == "bfloat16":
        case("ttnn.tilize_with_val_padding", name, [In((1, 1, 20, 40), layout="ROW_MAJOR", mem=inp.mem)],
             lambda c, x: c.ttnn.tilize_with_val_padding(x, [1, 1, 32, 64], 0.0), source, _same)
TILIZE_PADDED = [
    ("yolo-in-rm", (1, 1, 100, 3), [1, 1, 128, 32], YOLOV4), ("whisper-1500", (1, 1, 1500, 80), [1, 1, 1504, 96], WHISPER),
    ("cnn-odd", (1, 1, 50, 60), [1, 1, 64, 64], TT_CNN), ("tokens-7", (1, 1, 7, 128), [1, 1, 32, 128], LLAMA_GEN),
    ("l1-odd", (1, 1, 40, 70), [1, 1, 64, 96], TT_CNN), ("batch2", (2, 1, 10, 32), [2, 1, 32, 32], WHISPER),
    ("exact", (1, 1, 32, 64), [1, 1, 32, 64], TT_CNN), ("wide", (1, 1, 1, 1000), [1, 1, 32, 1024], LLAMA_HEAD),
]
for name, shape, target, source in TILIZE_PADDED:
    mem = L1 if name.startswith("l1") else DRAM
    case("ttnn.tilize_with_val_padding", name, [In(shape, layout="ROW_MAJOR", mem=mem)],
         lambda c, x, target=target: c.ttnn.tilize_with_val_padding(x, target, 0.0), source, _same)


# --- sharding conversions -----------------------------------------------------------------------
# tt_cnn's executors and tt_transformers' decode move activations between DRAM, L1 interleaved
# and height/width/block-sharded L1 (executor.py reshard into the persistent L1 input,
# model.py's to_memory_config of the residual, attention's heads into height-sharded L1).
RESHARDS = [
    ("cnn-hs8", In((1, 1, 512, 32), layout="ROW_MAJOR"), height(8, 64, 32), height(4, 128, 32), TT_CNN_EXEC),
    ("cnn-hs8-tile", In((1, 1, 512, 64)), height(8, 64, 64), height(16, 32, 64), TT_CNN_EXEC),
    ("yolo-hs", In((1, 1, 1024, 32)), height(8, 128, 32), height(32, 32, 32), YOLOV4),
    ("residual-ws", In((1, 1, 32, 4096)), width(32, 32, 128), width(16, 32, 256), LLAMA_MODEL),
    ("residual-ws-1b", In((1, 1, 32, 2048)), width(16, 32, 128), width(8, 32, 256), LLAMA_MODEL),
    ("heads-hs", In((1, 8, 32, 64)), height(8, 32, 64), height(4, 64, 64), LLAMA_ATTN),
    ("unet-bs", In((1, 1, 256, 256)), block(4, 4, 64, 64), block(2, 2, 128, 128), "models/experimental/functional_unet/tt/unet_shallow_ttnn.py"),
    ("resnet-hs", In((1, 1, 3136, 64)), height(49, 64, 64), height(98, 32, 64), "models/demos/ttnn_resnet/tt/ttnn_functional_resnet50.py"),
    ("bfp8-ws", In((1, 1, 32, 2048), "bfloat8_b"), width(16, 32, 128), width(8, 32, 256), LLAMA_MLP),
    ("cnn-rm-hs", In((1, 1, 256, 16), layout="ROW_MAJOR"), height(8, 32, 16), height(4, 64, 16), TT_CNN),
    ("dram-hs", In((1, 1, 512, 64)), height(8, 64, 64), height(4, 128, 64, buffer="DRAM", per_row=8), TT_CNN_EXEC),
]
for name, inp, first, second, source in RESHARDS:
    case("ttnn.interleaved_to_sharded", name, [inp], lambda c, x, m=first: c.ttnn.interleaved_to_sharded(x, c.mem(m)),
         source, _same)
    sharded_in = In(inp.shape, inp.dtype, inp.layout, first)
    case("ttnn.sharded_to_interleaved", name, [sharded_in], lambda c, x: c.ttnn.sharded_to_interleaved(x, c.ttnn.L1_MEMORY_CONFIG),
         source, _same)
    case("ttnn.reshard", name, [sharded_in], lambda c, x, m=second: c.ttnn.reshard(x, c.mem(m)), source, _same)
    case("ttnn.to_memory_config", name, [inp], lambda c, x, m=first: c.ttnn.to_memory_config(x, c.mem(m)), source, _same)
    case("ttnn.to_memory_config", name + "-back", [sharded_in],
         lambda c, x: c.ttnn.to_memory_config(x, c.ttnn.DRAM_MEMORY_CONFIG), source, _same)
case("ttnn.reshard", "into-output", [In((1, 1, 512, 32), layout="ROW_MAJOR", mem=height(8, 64, 32)),
                                     In((1, 1, 512, 32), layout="ROW_MAJOR", mem=height(4, 128, 32), values="zeros")],
     lambda c, x, o: c.ttnn.reshard(x, c.mem(height(4, 128, 32)), o), TT_CNN_EXEC, None)


# --- attention ops --------------------------------------------------------------------------------
# tt_transformers' attention.py: decode QKV split of the fused [1, 1, 32, (nh + 2·nkv)·hd]
# projection into height-sharded heads, prefill nlp_create_qkv_heads, concat heads back,
# rotary_embedding_llama with its transformation matrix, SDPA prefill and decode (paged too),
# for Llama-3.2-1B (nh 32, nkv 8, hd 64), Llama-3.1-8B (hd 128) and smaller head counts.
HEADS = [  # name, users, nh, nkv, hd
    ("1b", 32, 32, 8, 64), ("8b", 32, 32, 8, 128), ("1b-8users", 8, 32, 8, 64), ("small", 32, 8, 8, 64),
    ("gqa4", 32, 16, 4, 64), ("mha", 32, 8, 8, 128), ("1user", 1, 32, 8, 64), ("16users", 16, 16, 8, 64),
    ("hd96", 32, 8, 2, 96), ("nkv1", 32, 8, 1, 128),
]
for name, users, nh, nkv, hd in HEADS:
    width_ = (nh + 2 * nkv) * hd
    case("ttnn.experimental.nlp_create_qkv_heads_decode", name, [In((1, 1, users, width_))],
         lambda c, x, nh=nh, nkv=nkv: c.ttnn.experimental.nlp_create_qkv_heads_decode(
             x, num_heads=nh, num_kv_heads=nkv, memory_config=c.ttnn.L1_HEIGHT_SHARDED_MEMORY_CONFIG), LLAMA_ATTN,
         lambda t, x, nh=nh, nkv=nkv, hd=hd, users=users: tuple(
             p.unsqueeze(0) for p in x.reshape(users, nh + 2 * nkv, hd).split([nh, nkv, nkv], dim=1)))
    seq = 32 if users >= 16 else 64
    case("ttnn.experimental.nlp_create_qkv_heads", name, [In((1, 1, seq, width_))],
         lambda c, x, nh=nh, nkv=nkv: c.ttnn.experimental.nlp_create_qkv_heads(
             x, num_heads=nh, num_kv_heads=nkv, transpose_k_heads=False), LLAMA_ATTN, None)
    case("ttnn.experimental.nlp_concat_heads", name, [In((1, nh, seq, hd))],
         lambda c, x: c.ttnn.experimental.nlp_concat_heads(x), LLAMA_ATTN,
         lambda t, x: x.permute(0, 2, 1, 3).reshape(1, 1, x.shape[2], -1))
    case("ttnn.experimental.nlp_concat_heads_decode", name,
         [In((1, users, 32, hd), mem=height(users, 32, hd, per_row=8))],
         lambda c, x, nh=nh: c.ttnn.experimental.nlp_concat_heads_decode(x, num_heads=nh), LLAMA_ATTN,
         lambda t, x, nh=nh: t.nn.functional.pad(x[0, :, :nh, :].reshape(1, 1, x.shape[1], -1), (0, 0, 0, 32 - x.shape[1])))
    case("ttnn.transformer.scaled_dot_product_attention", name,
         [In((1, nh, 128, hd)), In((1, nkv, 128, hd)), In((1, nkv, 128, hd))],
         lambda c, q, k, v: c.ttnn.transformer.scaled_dot_product_attention(q, k, v, is_causal=True), LLAMA_ATTN, None)
    case("ttnn.transformer.scaled_dot_product_attention_decode", name,
         [In((1, users, nh, hd)), In((users, nkv, 256, hd)), In((users, nkv, 256, hd))],
         lambda c, q, k, v, users=users: c.ttnn.transformer.scaled_dot_product_attention_decode(
             q, k, v, cur_pos=[100] * users), LLAMA_ATTN, None)
    case("ttnn.transformer.paged_scaled_dot_product_attention_decode", name,
         [In((1, users, nh, hd)), In((users * 4, nkv, 64, hd)), In((users * 4, nkv, 64, hd)),
          In((users, 4), "int32", "ROW_MAJOR", values=f"index:{users * 4}"),
          In((users,), "int32", "ROW_MAJOR", values="index:200")],
         lambda c, q, k, v, table, pos: c.ttnn.transformer.paged_scaled_dot_product_attention_decode(
             q, k, v, table, cur_pos_tensor=pos), LLAMA_ATTN, None)
    case("ttnn.experimental.rotary_embedding_llama", name,
         [In((1, users, nh, hd), mem=height(users, 32, hd, per_row=8)),
          In((1, users, 32, hd), mem=height(users, 32, hd, per_row=8)),
          In((1, users, 32, hd), mem=height(users, 32, hd, per_row=8)),
          In((1, 1, 32 * users, 32), mem=height(users, 32, 32, per_row=8))],
         lambda c, x, cos, sin, tm: c.ttnn.experimental.rotary_embedding_llama(x, cos, sin, tm, is_decode_mode=True),
         LLAMA_ROPE, None)
    case("ttnn.experimental.rotary_embedding", name,
         [In((1, nh, 32, hd)), In((1, 1, 128, hd)), In((1, 1, 128, hd))],
         lambda c, x, cos, sin: c.ttnn.experimental.rotary_embedding(x, cos, sin, 0),
         "models/demos/falcon7b_common/tt/falcon_rotary_embedding.py", None)


# --- KV caches ------------------------------------------------------------------------------------
# attention.py's decode update of the cache at each user's position (paged_update_cache with
# a position tensor and page table), prefill fills (fill_cache per user, paged_fill_cache),
# and the older update_cache(cache, x, index) form of the falcon and llama2 demos.
for name, users, _, nkv, hd in HEADS:
    case("ttnn.fill_cache", name, [In((users, nkv, 256, hd)), In((1, nkv, 64, hd))],
         lambda c, cache, x: c.ttnn.fill_cache(cache, x, 0), LLAMA_ATTN, None)
    case("ttnn.update_cache", name, [In((users, nkv, 256, hd)), In((1, nkv, 32, hd))],
         lambda c, cache, x: c.ttnn.update_cache(cache, x, 5), "models/demos/falcon7b_common/tt/falcon_attention.py", None)
    case("ttnn.experimental.paged_update_cache", name,
         [In((users * 4, nkv, 64, hd)), In((1, users, 32, hd), mem=height(users, 32, hd, per_row=8)),
          In((users,), "int32", "ROW_MAJOR", values="index:200"),
          In((users, 4), "int32", "ROW_MAJOR", values=f"index:{users * 4}")],
         lambda c, cache, x, pos, table: c.ttnn.experimental.paged_update_cache(
             cache, x, update_idxs_tensor=pos, page_table=table), LLAMA_ATTN, None)
    case("ttnn.experimental.paged_fill_cache", name,
         [In((users * 4, nkv, 64, hd)), In((1, nkv, 128, hd)),
          In((users, 4), "int32", "ROW_MAJOR", values=f"index:{users * 4}")],
         lambda c, cache, x, table: c.ttnn.experimental.paged_fill_cache(cache, x, table, batch_idx=0), LLAMA_ATTN, None)


def _free_and_allocate_again(c: Any, x: Any) -> Any:
    """deallocate, then a tensor of the same spec: it lands on the freed address."""
    spec = x.spec
    c.ttnn.deallocate(x)
    return c.ttnn.allocate_tensor_on_device(spec, c.device)


# --- creation and transfers ---------------------------------------------------------------------
# Tensors models create on device: constant masks and scalars (full/zeros/ones in DRAM and L1,
# model.py's and generator.py's), the persistent inputs a traced generator allocates once
# (allocate_tensor_on_device, generator.py / executor.py), the host↔device copies of each
# decode step (copy_host_to_device_tensor into them, to_device/from_device, the executor's
# copy_device_to_host_tensor of outputs) and explicit frees (deallocate).
CREATE = [
    ("mask-decode", (1, 1, 32, 256), "bfloat16", "TILE", DRAM, LLAMA_MODEL),
    ("mask-l1", (1, 1, 32, 128), "bfloat16", "TILE", L1, LLAMA_MODEL),
    ("positions", (1, 32), "int32", "ROW_MAJOR", DRAM, LLAMA_GEN),
    ("scalar-tile", (1, 1, 32, 32), "bfloat16", "TILE", DRAM, LLAMA_GEN),
    ("f32-rows", (1, 1, 32, 64), "float32", "TILE", DRAM, LLAMA_ROPE),
    ("rm-rows", (1, 1, 8, 64), "bfloat16", "ROW_MAJOR", DRAM, LLAMA_GEN),
    ("cnn-input", (1, 1, 1024, 16), "bfloat16", "ROW_MAJOR", DRAM, TT_CNN_EXEC),
    ("whisper-enc", (1, 1, 448, 384), "bfloat16", "TILE", DRAM, WHISPER),
    ("tokens", (1, 1, 1, 32), "uint32", "ROW_MAJOR", DRAM, LLAMA_GEN),
    ("bfp8", (1, 1, 32, 512), "bfloat8_b", "TILE", DRAM, LLAMA_MLP),
]
for name, shape, dtype, layout, mem, source in CREATE:
    value = 0 if dtype in ("int32", "uint32") else 0.5

    def _full(c: Any, op: str, shape: tuple = shape, dtype: str = dtype, layout: str = layout, mem: Any = mem,
              value: Any = value) -> Any:
        kw: dict[str, Any] = dict(dtype=getattr(c.ttnn, dtype), layout=getattr(c.ttnn, f"{layout}_LAYOUT"),
                                  device=c.device, memory_config=c.mem(mem))
        if op == "full":
            return c.ttnn.full(list(shape), value, **kw)
        return getattr(c.ttnn, op)(list(shape), **kw)

    for op in ("full", "zeros", "ones", "empty"):
        case(f"ttnn.{op}", name, [], lambda c, op=op, _full=_full: _full(c, op), source, None)
    if dtype in ("bfloat16", "float32"):
        case("ttnn.rand", name, [], lambda c, _full=_full: _full(c, "rand"), source, None)
    like = In(shape, dtype, layout, mem)
    for op in ("zeros_like", "ones_like"):
        case(f"ttnn.{op}", name, [like], lambda c, x, op=op: getattr(c.ttnn, op)(x), source, None)
    case("ttnn.full_like", name, [like], lambda c, x, value=value: c.ttnn.full_like(x, value), source, None)
    tt_layout = layout
    case("ttnn.allocate_tensor_on_device", name, [],
         lambda c, shape=shape, dtype=dtype, tt_layout=tt_layout, mem=mem: c.ttnn.allocate_tensor_on_device(
             list(shape), getattr(c.ttnn, dtype), getattr(c.ttnn, f"{tt_layout}_LAYOUT"), c.device, c.mem(mem)),
         source, None)
    host = In(shape, dtype, layout, None)
    case("ttnn.to_device", name, [host], lambda c, h, mem=mem: c.ttnn.to_device(h, c.device, memory_config=c.mem(mem)),
         source, None)
    case("ttnn.from_device", name, [like], lambda c, x: c.ttnn.from_device(x), source, None)
    case("ttnn.copy_host_to_device_tensor", name, [host, In(shape, dtype, layout, mem, "zeros")],
         lambda c, h, d: c.ttnn.copy_host_to_device_tensor(h, d), source, None)
    case("ttnn.copy_device_to_host_tensor", name, [like, In(shape, dtype, layout, None, "zeros")],
         lambda c, d, h: c.ttnn.copy_device_to_host_tensor(d, h), source, None)
    case("ttnn.deallocate", name, [like], _free_and_allocate_again, source, None)


# --- plus_one (decode position counters, in place) -------------------------------------------
PLUS_ONE = [("users32", (32,)), ("users1", (1,)), ("users8", (8,)), ("users16", (16,)), ("users64", (64,)),
            ("users4", (4,)), ("users2", (2,)), ("users128", (128,)), ("users24", (24,)), ("users12", (12,))]
for name, shape in PLUS_ONE:
    case("ttnn.plus_one", name, [In(shape, "int32", "ROW_MAJOR", values="index:1000")],
         lambda c, x: c.ttnn.plus_one(x), LLAMA_GEN, None)


# --- more tilize/untilize, embedding and CNN ops -------------------------------------------------
for name, shape, mem, source in [
    ("whisper-rows", (1, 1, 448, 384), DRAM, WHISPER), ("tokens-l1", (1, 1, 32, 256), L1, LLAMA_GEN),
    ("cnn-bs", (1, 1, 256, 256), block(4, 4, 64, 64), TT_CNN), ("resnet-hs", (1, 1, 3136, 64), height(49, 64, 64), TT_CNN),
    ("f32", (1, 1, 32, 128), DRAM, LLAMA_ROPE),
]:
    dt = "float32" if name == "f32" else "bfloat16"
    case("ttnn.tilize", name, [In(shape, dt, "ROW_MAJOR", mem)], lambda c, x: c.ttnn.tilize(x), source, _same)
    case("ttnn.untilize", name, [In(shape, dt, "TILE", mem)], lambda c, x: c.ttnn.untilize(x), source, _same)
case("ttnn.tilize", "to-l1", [In((1, 1, 64, 64), layout="ROW_MAJOR")],
     lambda c, x: c.ttnn.tilize(x, memory_config=c.ttnn.L1_MEMORY_CONFIG), TT_CNN, _same)
case("ttnn.untilize", "to-l1", [In((1, 1, 64, 64))],
     lambda c, x: c.ttnn.untilize(x, memory_config=c.ttnn.L1_MEMORY_CONFIG), TT_CNN, _same)

for name, ids_shape, vocab, dim, layout in [
    ("prefill-1x32-rm", (1, 32), 256, 64, "ROW_MAJOR"), ("batch4", (4, 32), 256, 128, "TILE"),
    ("whisper-tokens", (1, 64), 1024, 384, "TILE"), ("rope-idx", (1, 32), 128, 64, "TILE"),
    ("decode-1x1x1x32-l1", (1, 1, 1, 32), 512, 256, "TILE"), ("wide", (1, 32), 128, 1024, "TILE"),
]:
    lay = layout
    mem_kw = "L1" if name.endswith("-l1") else None
    case(
        "ttnn.embedding", name,
        [In(ids_shape, "uint32", "ROW_MAJOR", values=f"index:{vocab}"), In((vocab, dim), layout="ROW_MAJOR")],
        lambda c, ids, table, lay=lay, mem_kw=mem_kw: c.ttnn.embedding(
            ids, table, layout=getattr(c.ttnn, f"{lay}_LAYOUT"),
            **({} if mem_kw is None else {"memory_config": getattr(c.ttnn, f"{mem_kw}_MEMORY_CONFIG")})),
        LLAMA_EMBD if "rope" not in name else LLAMA_ROPE,
    )

for name, (n, h, wd, cin, cout, k, s, p), mem, dealloc in [
    ("yolo-hs-dealloc", (1, 32, 32, 32, 32, 3, 1, 1), height(8, 128, 32), True),
    ("yolo-hs", (1, 32, 32, 32, 32, 3, 1, 1), height(8, 128, 32), False),
    ("stride2-dealloc", (1, 32, 32, 32, 64, 3, 2, 1), DRAM, True),
    ("resnet-1x1-hs-dealloc", (1, 16, 32, 64, 64, 1, 1, 0), height(8, 64, 64), True),
    ("l1-3x3-dealloc", (1, 16, 16, 32, 32, 3, 1, 1), L1, True),
    ("l1-3x3", (1, 16, 16, 32, 32, 3, 1, 1), L1, False),
]:
    args = dict(n=n, h=h, wd=wd, cin=cin, cout=cout, k=k, s=s, p=p, dealloc=dealloc)
    layout = "ROW_MAJOR"
    case(
        "ttnn.conv2d", name,
        [In((1, 1, n * h * wd, cin), layout=layout, mem=mem), In((cout, cin, k, k), "float32", "ROW_MAJOR", mem=None)],
        lambda c, x, w, args=args: _conv(c, x, w, **args), YOLOV4_DS1 if "yolo" in name else TT_CNN,
    )

POOLS = [  # name, n, h, w, c, kernel, stride, pad, mem
    ("yolo-spp-5", 1, 16, 16, 64, 5, 1, 2, DRAM), ("yolo-spp-9", 1, 16, 16, 64, 9, 1, 4, DRAM),
    ("resnet-stem", 1, 32, 32, 64, 3, 2, 1, DRAM), ("hs", 1, 32, 32, 32, 2, 2, 0, height(8, 128, 32)),
    ("l1", 1, 16, 16, 32, 2, 2, 0, L1), ("vgg", 1, 32, 32, 64, 2, 2, 0, DRAM), ("batch2", 2, 16, 16, 32, 2, 2, 0, DRAM),
    ("unet", 1, 32, 64, 32, 2, 2, 0, DRAM), ("k3s1", 1, 16, 16, 32, 3, 1, 1, DRAM), ("wide-c", 1, 8, 8, 256, 2, 2, 0, DRAM),
]
for name, n, h, w, ch, k, s, p, mem in POOLS:
    case("ttnn.max_pool2d", name, [In((1, 1, n * h * w, ch), layout="ROW_MAJOR", mem=mem)],
         lambda c, x, n=n, h=h, w=w, ch=ch, k=k, s=s, p=p: c.ttnn.max_pool2d(
             x, n, h, w, ch, [k, k], [s, s], [p, p], [1, 1]), YOLOV4_NECK if "yolo" in name else TT_CNN, None)
    case("ttnn.upsample", name, [In((n, h, w, ch), layout="ROW_MAJOR", mem=DRAM if mem.layout != "INTERLEAVED" else mem)],
         lambda c, x: c.ttnn.upsample(x, 2), YOLOV4_NECK if "yolo" in name else TT_CNN, None)

# two more TILE activations for the ops above that only take TILE inputs
EXTRA_TILE = [("yolo-hs", In((1, 1, 1024, 32), mem=height(8, 128, 32)), YOLOV4),
              ("prefill-l1", In((1, 1, 64, 512), mem=L1), LLAMA_MLP)]
for name, inp, source in EXTRA_TILE:
    n, c_, h, w = inp.shape
    case("ttnn.typecast", name, [inp], lambda c, x: c.ttnn.typecast(x, c.ttnn.float32), source, _same)
    case("ttnn.clamp", name, [inp], lambda c, x: c.ttnn.clamp(x, min=-0.5, max=0.5), source,
         lambda t, x: x.float().clamp(-0.5, 0.5))
    case("ttnn.where", name, [inp, inp, In(inp.shape, inp.dtype, inp.layout, inp.mem, "zeros")],
         lambda c, cond, a, b: c.ttnn.where(cond, a, b), source, lambda t, cond, a, b: t.where(cond != 0, a.float(), b.float()))
    case("ttnn.pow", name, [inp], lambda c, x: c.ttnn.pow(x, 2.0), source, lambda t, x: x.float() ** 2)
    case("ttnn.repeat", name, [inp], lambda c, x: c.ttnn.repeat(x, [1, 1, 2, 1]), source, lambda t, x: x.repeat(1, 1, 2, 1))
    case("ttnn.repeat_interleave", name, [inp], lambda c, x: c.ttnn.repeat_interleave(x, 2, dim=2), source,
         lambda t, x: x.repeat_interleave(2, dim=2))
    case("ttnn.pad", name, [inp], lambda c, x: c.ttnn.pad(x, [(0, 0), (0, 0), (0, 32), (0, 0)], 0.0), source,
         lambda t, x: t.nn.functional.pad(x.float(), (0, 0, 0, 32)))
    case("ttnn.untilize_with_unpadding", name, [inp],
         lambda c, x, e=(n - 1, c_ - 1, h // 2 - 1, w - 1): c.ttnn.untilize_with_unpadding(x, list(e)), source,
         lambda t, x, e=(n, c_, h // 2, w): x[: e[0], : e[1], : e[2], : e[3]])
for name, shape in [("noise-decode", (1, 1, 32, 2048)), ("noise-l1", (1, 1, 64, 64)), ("noise-f32-rows", (1, 1, 32, 32))]:
    case("ttnn.rand", name, [], lambda c, shape=shape: c.ttnn.rand(list(shape), device=c.device, dtype=c.ttnn.bfloat16,
                                                                  layout=c.ttnn.TILE_LAYOUT), LLAMA_GEN, None)


# --- the allocator's choice among free blocks -------------------------------------------------------
# A decode loop frees and allocates tensors of many sizes (tt_transformers' model.py and
# generator.py); which hole a new tensor takes decides what a trace replay overwrites.
def _holes(c: Any, *, mem: Any, sizes: tuple, free: tuple, then: tuple) -> Any:
    """Allocate [1, 1, 32, 32·s] tensors for s in `sizes`, free those at `free`, then allocate
    `then` sizes: returns the new tensors (their addresses say which holes they took)."""
    ttnn = c.ttnn
    cfg = c.mem(mem)
    made = [ttnn.allocate_tensor_on_device([1, 1, 32, 32 * s], ttnn.bfloat16, ttnn.TILE_LAYOUT, c.device, cfg)
            for s in sizes]
    for i in free:
        ttnn.deallocate(made[i])
    new = [ttnn.allocate_tensor_on_device([1, 1, 32, 32 * s], ttnn.bfloat16, ttnn.TILE_LAYOUT, c.device, cfg)
           for s in then]
    return new + [t for i, t in enumerate(made) if i not in free]


for name, mem, sizes, free, then in [
    ("dram-big-hole-first", DRAM, (32, 8, 8, 8, 8), (0, 2), (8,)),
    ("dram-small-hole-first", DRAM, (8, 8, 32, 8, 8), (0, 2), (8,)),
    ("dram-exact-fit-later", DRAM, (24, 8, 16, 8), (0, 2), (16,)),
    ("dram-two-into-one", DRAM, (32, 8, 8), (0,), (8, 8, 8)),
    ("l1-big-hole-first", L1, (260, 130, 130, 130, 130), (0, 2), (130,)),
    ("l1-small-hole-first", L1, (130, 130, 260, 130, 130), (0, 2), (130,)),
    ("l1-exact-fit-later", L1, (390, 130, 260, 130), (0, 2), (260,)),
    ("l1-merge-neighbours", L1, (130, 130, 130, 130), (1, 2), (260,)),
    ("dram-merge-neighbours", DRAM, (8, 8, 8, 8), (1, 2), (16,)),
    ("l1-sharded-hole", height(1, 32, 256), (8, 8, 8), (1,), (8,)),
]:
    case("scenario.free_list", name, [],
         lambda c, mem=mem, sizes=sizes, free=free, then=then: _holes(c, mem=mem, sizes=sizes, free=free, then=then),
         LLAMA_GEN, None)

# keepdim=False: the form sampling code uses to get one value per row (generator.py)
for name, inp, source in REDUCE_INPUTS[:4]:
    for op_name, ref in [("sum", lambda t, x: x.float().sum(-1)), ("mean", lambda t, x: x.float().mean(-1)),
                         ("max", lambda t, x: x.float().amax(-1))]:
        case(f"ttnn.{op_name}", name + "-nokeepdim", [inp],
             lambda c, x, op_name=op_name: getattr(c.ttnn, op_name)(x, dim=-1), source, ref)


# the ops of ttnn 0.81.1's name surface (in-place binaries, activations, statistics, views)
import corpus_names  # noqa: E402,F401 - appends its cases to CORPUS
