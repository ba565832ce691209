"""CNN ops of tt-metal's tt_cnn models: conv2d, max_pool2d, upsample, on activations laid out
as ttnn keeps them, [1, 1, N·H·W, C] (or [N, H, W, C]).

conv2d takes its weights from the host like ttnn (which moves and prepares them on the first
call): the host weights' values become part of the op, so a trace replays the same weights.
"""

from __future__ import annotations

from typing import Any, Optional
from collections.abc import Sequence

import torch
import torch.nn.functional as F

from ..decorators import operation
from ..tensor import Tensor
from ..types import DRAM_MEMORY_CONFIG, BufferType, DataType, Layout, MemoryConfig
from ._dispatch import as_float, run


def _pair(v: Any) -> tuple[int, int]:
    return (int(v), int(v)) if isinstance(v, int) else (int(v[0]), int(v[1]))


def _padding(p: Any) -> tuple[int, int, int, int]:
    """(left, right, top, bottom) for F.pad from ttnn's (h, w) or (top, bottom, left, right)."""
    p = [int(x) for x in ((p, p) if isinstance(p, int) else p)]
    if len(p) == 2:
        return p[1], p[1], p[0], p[0]
    top, bottom, left, right = p
    return left, right, top, bottom


def _nchw(x: torch.Tensor, n: int, h: int, w: int, c: int) -> torch.Tensor:
    return as_float(x).reshape(n, h, w, -1)[..., :c].permute(0, 3, 1, 2)


def _flat(y: torch.Tensor) -> torch.Tensor:
    n, c, h, w = y.shape
    return y.permute(0, 2, 3, 1).reshape(1, 1, n * h * w, c)


def _conv_activation(activation: Any) -> Any:
    """Conv2dConfig.activation: "", None, a name ("relu") or a UnaryWithParam/UnaryOpType."""
    if not activation:
        return lambda y: y
    act = getattr(activation, "op_type", activation)
    name = act.name if hasattr(act, "name") else str(act).rsplit(".", 1)[-1]
    fns = {"relu": torch.relu, "silu": F.silu, "gelu": F.gelu, "sigmoid": torch.sigmoid, "tanh": torch.tanh}
    try:
        return fns[name.lower()]
    except KeyError:
        raise RuntimeError(f"ttnn emulator: conv2d activation {name!r} is not emulated (see docs/emulator.md)") from None


def _on_device(tensor: Optional[Tensor], device: Any) -> Optional[Tensor]:
    if tensor is None or tensor.device() is not None:
        return tensor
    from ..transfers import _host_to_device

    return _host_to_device(tensor, device, DRAM_MEMORY_CONFIG)


@operation("ttnn.conv2d")
def conv2d(
    *,
    input_tensor: Tensor,
    weight_tensor: Tensor,
    device: Any,
    in_channels: int,
    out_channels: int,
    batch_size: int,
    input_height: int,
    input_width: int,
    kernel_size: Sequence[int],
    stride: Sequence[int] = (1, 1),
    padding: Sequence[int] = (0, 0),
    dilation: Sequence[int] = (1, 1),
    groups: int = 1,
    bias_tensor: Optional[Tensor] = None,
    conv_config: Any = None,
    compute_config: Any = None,
    memory_config: Optional[MemoryConfig] = None,
    return_output_dim: bool = False,
    return_weights_and_bias: bool = False,
    dtype: Optional[DataType] = None,
    **_: Any,
) -> Any:
    """2-D convolution of an NHWC activation; output [1, 1, N·Ho·Wo, out_channels] in TILE layout.
    Returns (output, [Ho, Wo]) with return_output_dim and the weights and bias too with
    return_weights_and_bias, as ttnn does."""
    weights = weight_tensor._values().float() if weight_tensor.device() is None else None
    bias = bias_tensor._values().float().reshape(-1)[:out_channels] if bias_tensor is not None and bias_tensor.device() is None else None
    inputs = [input_tensor] + ([weight_tensor] if weights is None else []) + (
        [bias_tensor] if bias_tensor is not None and bias is None else [])
    n, h, w, cin, cout = int(batch_size), int(input_height), int(input_width), int(in_channels), int(out_channels)
    stride_, dilation_, pad = _pair(stride), _pair(dilation), _padding(padding)
    kh, kw = _pair(kernel_size)
    out_h = (h + pad[2] + pad[3] - dilation_[0] * (kh - 1) - 1) // stride_[0] + 1
    out_w = (w + pad[0] + pad[1] - dilation_[1] * (kw - 1) - 1) // stride_[1] + 1

    act = _conv_activation(getattr(conv_config, "activation", None))

    def fn(x: torch.Tensor, *rest: torch.Tensor) -> torch.Tensor:
        rest_iter = iter(rest)
        wt = weights if weights is not None else as_float(next(rest_iter))
        b = bias if bias is not None or bias_tensor is None else as_float(next(rest_iter)).reshape(-1)[:cout]
        y = F.conv2d(F.pad(_nchw(x, n, h, w, cin), pad), wt.reshape(cout, cin // groups, kh, kw), b,
                     stride=stride_, dilation=dilation_, groups=int(groups))
        return _flat(act(y))

    # deallocate_activation frees an L1 input once the op has read it, before the output is
    # allocated (ttnn 0.81.1, measured); a DRAM input is left alone.
    frees = [input_tensor] if getattr(conv_config, "deallocate_activation", False) and (
        input_tensor.memory_config().buffer_type == BufferType.L1) else []
    out_memory = memory_config
    if out_memory is None and not input_tensor.is_sharded():
        out_memory = DRAM_MEMORY_CONFIG  # an interleaved activation gives a DRAM output (measured)
    out = run("ttnn.conv2d", inputs, fn, dtype=dtype, layout=Layout.TILE, memory_config=out_memory, free_first=frees)
    if return_weights_and_bias:
        # ttnn returns the weights (and bias) it moved to the device; passed back in, they are
        # read from there (by the next calls and by a trace)
        prepared = [_on_device(t, device) for t in (weight_tensor, bias_tensor)]
        return (out, [out_h, out_w], prepared) if return_output_dim else (out, prepared)
    return (out, [out_h, out_w]) if return_output_dim else out


@operation("ttnn.max_pool2d")
def max_pool2d(
    input_tensor: Tensor,
    batch_size: int,
    input_h: int,
    input_w: int,
    channels: int,
    kernel_size: Sequence[int],
    stride: Sequence[int],
    padding: Sequence[int],
    dilation: Sequence[int] = (1, 1),
    ceil_mode: bool = False,
    *,
    memory_config: Optional[MemoryConfig] = None,
    **_: Any,
) -> Tensor:
    """Max over each kernel window per channel; output [1, 1, N·Ho·Wo, C]."""
    n, h, w, c = int(batch_size), int(input_h), int(input_w), int(channels)
    pad = _padding(padding)

    def fn(x: torch.Tensor) -> torch.Tensor:
        padded = F.pad(_nchw(x, n, h, w, c), pad, value=float("-inf"))
        y = F.max_pool2d(padded, _pair(kernel_size), _pair(stride), 0, _pair(dilation), ceil_mode=ceil_mode)
        return _flat(y)

    return run("ttnn.max_pool2d", [input_tensor], fn, memory_config=memory_config)


@operation("ttnn.upsample")
def upsample(input_tensor: Tensor, scale_factor: Any, *, mode: str = "nearest", memory_config: Optional[MemoryConfig] = None, **_: Any) -> Tensor:
    """Nearest-neighbour (or bilinear) upsampling of an [N, H, W, C] tensor."""
    scale = _pair(scale_factor)

    def fn(x: torch.Tensor) -> torch.Tensor:
        y = F.interpolate(as_float(x).permute(0, 3, 1, 2), scale_factor=scale, mode=mode)
        return y.permute(0, 2, 3, 1).contiguous()

    return run("ttnn.upsample", [input_tensor], fn, memory_config=memory_config)
