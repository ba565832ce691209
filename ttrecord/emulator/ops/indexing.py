"""`Tensor.__getitem__`, as ttnn.operations.core.__getitem__ in ttnn 0.81.1: integers,
slices and one Ellipsis per dimension become one `ttnn.slice` of a device tensor, whose
integer-indexed dims are then squeezed away (a view of the slice's buffer, as measured).
Host tensors are sliced on the host (unit steps only)."""

from __future__ import annotations

import builtins
from typing import Any

from ..tensor import Tensor


def _normalize(slices: Any, shape: tuple[int, ...]) -> tuple[list[builtins.slice], list[int]]:
    """Per dimension a slice with explicit start/stop/step, and the integer-indexed dims."""
    rank = len(shape)
    items = (slices,) if isinstance(slices, (int, builtins.slice, type(...))) else tuple(slices)
    if sum(1 for s in items if s is Ellipsis) > 1:
        raise ValueError("Only one ellipsis ('...') is allowed in a slice.")
    if Ellipsis in items:
        at = items.index(Ellipsis)
        missing = rank - (len(items) - 1)
        if missing < 0:
            raise IndexError(f"Too many indices for tensor of dimension {rank}")
        items = items[:at] + (builtins.slice(None),) * missing + items[at + 1 :]
    items = items + (builtins.slice(None),) * (rank - len(items))
    if len(items) > rank:
        raise IndexError(f"Too many indices for tensor of dimension {rank}")
    final, singled = [], []
    for dim, s in enumerate(items):
        if isinstance(s, int):
            idx = s if s >= 0 else s + shape[dim]
            if not 0 <= idx < shape[dim]:
                raise IndexError(
                    f"Index {s} (converted to {idx}) is out of bounds for dimension {dim} of size {shape[dim]}"
                )
            final.append(builtins.slice(idx, idx + 1, 1))
            singled.append(dim)
        elif isinstance(s, builtins.slice):
            start = 0 if s.start is None else s.start
            stop = shape[dim] if s.stop is None else s.stop
            final.append(builtins.slice(start, stop, 1 if s.step is None else s.step))
        else:
            raise TypeError(f"Invalid slice type: {s}")
    return final, singled


def getitem(tensor: Tensor, slices: Any) -> Tensor:
    from .data_movement import slice as ttnn_slice
    from .shape import squeeze
    from .views import _view

    final, singled = _normalize(slices, tuple(tensor.shape))
    if tensor.device() is not None:
        out = ttnn_slice(tensor, [s.start for s in final], [s.stop for s in final], [s.step for s in final])
    else:
        if any(s.step != 1 for s in final):
            raise RuntimeError("Host tensors cannot be accessed with non-unit stride")
        values = tensor._values()[tuple(final)].contiguous()
        out = Tensor.on_host(tensor.spec._replace(shape=type(tensor.shape)(values.shape)), values)
    if not singled:
        return out
    # ttnn.squeeze of the slice's output is a view in ttnn 0.81.1 (measured: one buffer, the
    # slice's); where a view cannot keep the pages, the emulator's squeeze copies.
    kept = [d for i, d in enumerate(out.shape) if i not in singled]
    try:
        return _view("ttnn.squeeze", out, kept)
    except RuntimeError:
        for shift, dim in enumerate(sorted(singled)):
            out = squeeze(out, dim - shift)
        return out
