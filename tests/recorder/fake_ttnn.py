"""A tiny ttnn stand-in whose ops call other ops through `import ttnn`, as real ttnn's Python
layer does, to test that such nested calls are recorded as children of the user's call."""

from __future__ import annotations

import sys
import types
from typing import NamedTuple


class BufferInfo(NamedTuple):
    device_id: int
    address: int
    max_size_per_bank: int
    buffer_type: str


class Device:
    def __init__(self) -> None:
        self.live: dict[int, int] = {}
        self.next = 1000

    def id(self) -> int:
        return 0


class Tensor:
    __slots__ = ("device_", "address", "tensor_id")  # no __weakref__, like the real one
    _ids = 0

    def __init__(self, device: Device) -> None:
        self._setup(device)

    @classmethod
    def new(cls, device: Device) -> Tensor:
        """An op's output: made in 'native code', without the Python constructor."""
        t = cls.__new__(cls)
        t._setup(device)
        return t

    def _setup(self, device: Device) -> None:
        self.device_ = device
        self.address = device.next
        device.next += 64
        device.live[self.address] = 64
        Tensor._ids += 1
        self.tensor_id = Tensor._ids

    def __del__(self) -> None:
        self.device_.live.pop(self.address, None)

    shape = (32, 32)
    dtype = "BFLOAT16"
    layout = "TILE"

    def storage_type(self) -> str:
        return "StorageType.DEVICE"

    def buffer_address(self) -> int:
        return self.address

    def memory_config(self):
        return types.SimpleNamespace(buffer_type="DRAM", memory_layout="INTERLEAVED")

    def buffer_num_pages(self) -> int:
        return 1

    def buffer_aligned_page_size(self) -> int:
        return 64

    def device(self) -> Device:
        return self.device_

    def cpu(self) -> Tensor:
        return self


def make() -> types.ModuleType:
    ttnn = types.ModuleType("fake_ttnn")
    ttnn.__file__ = __file__
    ttnn.Tensor = Tensor
    ttnn.Device = Device
    reports = types.SimpleNamespace(
        get_buffers=lambda devices: [BufferInfo(0, a, s, "DRAM") for d in devices for a, s in d.live.items()],
        get_device_info=lambda device: types.SimpleNamespace(l1_num_banks=130),
    )
    ttnn._ttnn = types.SimpleNamespace(reports=reports)
    ttnn.TILE_LAYOUT = "TILE"

    def open_device(device_id: int = 0) -> Device:
        return Device()

    def relu(t: Tensor) -> Tensor:
        return Tensor.new(t.device_)

    def gelu(t: Tensor) -> Tensor:
        inner = sys.modules["ttnn"]  # as real ttnn's Python ops do: `import ttnn; ttnn.relu(...)`
        return inner.relu(inner.relu(t))

    def to_torch(t: Tensor) -> str:
        return f"values of {t.cpu().address}"

    for fn in (open_device, relu, gelu, to_torch):
        fn.__module__ = "fake_ttnn"
        setattr(ttnn, fn.__name__, fn)
    return ttnn
