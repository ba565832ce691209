"""`ttnn.reallocate` and `ttnn.move` (ttnn::move): the input's buffer is freed first, then the output is
allocated (the lowest fitting address, so a tensor moves down over freed space and lands
back on its own address when nothing below is free, as measured on ttnn 0.81.1) and the
values are copied. The input tensor is deallocated afterwards."""

from __future__ import annotations

from typing import Any, Optional

import torch

from .. import trace as _trace
from ..decorators import operation
from ..tensor import Tensor, new_device_tensor, write_values
from ..types import MemoryConfig


def _same(a: torch.Tensor) -> torch.Tensor:
    return a


@operation("ttnn.reallocate")
def reallocate(tensor: Tensor, memory_config: Optional[MemoryConfig] = None) -> Tensor:
    return _move("ttnn.reallocate", tensor, memory_config)


@operation("ttnn.move")
def move(input_tensor: Tensor, *, memory_config: Optional[MemoryConfig] = None) -> Tensor:
    """ttnn.move, which ttnn.reallocate runs: the same free-then-allocate (measured)."""
    return _move("ttnn.move", input_tensor, memory_config)


def _move(name: str, tensor: Tensor, memory_config: Optional[MemoryConfig]) -> Tensor:
    device = tensor.device()
    if device is None:
        raise RuntimeError(
            "TT_FATAL @ ttnn/cpp/ttnn/operations/data_movement/move/move.cpp:0: "
            "input_tensor.storage_type() == StorageType::DEVICE\ninfo:\nInput tensor must be on device"
        )
    with device.lock:
        device.queues.run_now(0)
        values = tensor._chip_values()
        source: Any = Tensor.on_device(tensor.spec, tensor._buffer)  # type: ignore[arg-type]  # the freed address, for a trace
        source._chip = tensor._chip
        tensor._release()
        spec = tensor.spec._replace(memory_config=memory_config or tensor.memory_config())
        out = new_device_tensor(device, spec)
        out._chip = tensor._chip
        for chip, v in zip([tensor._chip] if tensor._chip is not None else range(device.num_chips), values):
            write_values(out, v, chip)
        if device.capturing:
            chips = (tensor._chip,) if tensor._chip is not None else None
            _trace.record_op(device, name, _same, [source], [out], chips)
    return out
