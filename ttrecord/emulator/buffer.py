"""Device buffers and their plain descriptions.

A `DeviceBuffer` owns one allocation. It frees it in `__del__`, so the
allocation disappears the moment the last Python object referring to it goes,
with no ttnn call a proxy could see — the way real ttnn tensors behave.

A `BufferDesc` is a plain, reference-free description (buffer type, address,
pages) of where a buffer was. Trace records keep only descriptors, never
buffers, so a trace neither keeps its intermediates alive nor notices when a
captured address is reused: replay writes wherever the descriptor points.
"""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, Any, NamedTuple, Optional

from .types import BufferType

if TYPE_CHECKING:
    from .device import MeshDevice

_unique_ids = itertools.count()


class BufferDesc(NamedTuple):
    """Where a buffer's pages are: enough to read or write them without the buffer."""

    buffer_type: BufferType
    address: int
    num_pages: int
    page_size: int
    aligned_page_size: int
    size_per_bank: int
    unique_id: int
    # Sharded buffers: where each page is (sharding.Placement); None for interleaved.
    placement: Optional[Any] = None

    def bank_range(self) -> tuple[int, int]:
        """Bank-local [start, end) footprint, the range overlap is decided on."""
        return self.address, self.address + self.size_per_bank


class DeviceBuffer:
    """One interleaved allocation on a device; freed when the last reference goes."""

    __slots__ = ("device", "desc", "__weakref__")

    def __init__(self, device: MeshDevice, desc: BufferDesc) -> None:
        self.device: MeshDevice | None = device
        self.desc = desc

    @staticmethod
    def next_unique_id() -> int:
        return next(_unique_ids)

    @property
    def is_allocated(self) -> bool:
        return self.device is not None and self.device.is_open

    def release(self) -> None:
        """Free the allocation now (idempotent)."""
        device, self.device = self.device, None
        if device is not None:
            device._free_buffer(self.desc)

    def __del__(self) -> None:
        try:
            self.release()
        except Exception:  # interpreter shutdown: modules may be half torn down
            pass
