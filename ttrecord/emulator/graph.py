"""`ttnn.graph`: capture of allocate/deallocate events from inside the allocator.

Real ttnn's graph capture records `buffer_allocate` / `buffer_deallocate` nodes
(among others) as a list of dicts; the emulator records the same node types with
the same parameter names, for every device, while a capture is active.
"""

from __future__ import annotations

import enum
import threading
from typing import Any

from . import device as _device


class RunMode(enum.IntEnum):
    NORMAL = 0
    NO_DISPATCH = 1


class _Capture:
    def __init__(self) -> None:
        self.nodes: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        self._add("capture_start", {})

    def _add(self, node_type: str, params: dict[str, Any]) -> None:
        with self.lock:
            self.nodes.append(
                {"counter": len(self.nodes), "node_type": node_type, "params": params, "connections": []}
            )

    def _params(self, mesh: Any, desc: Any) -> dict[str, Any]:
        # Keys and value types as measured on ttnn 0.81.1 (size is the total byte size).
        return {
            "address": desc.address,
            "buffer_type": desc.buffer_type.value,
            "device_id": mesh.mesh_id,
            "layout": "INTERLEAVED",
            "max_size_per_bank": desc.size_per_bank,
            "num_cores": 0,
            "page_size": desc.page_size,
            "size": desc.num_pages * desc.page_size,
            # a trace buffer is a DRAM buffer to the graph (get_buffers says TRACE)
            "type": "DRAM" if desc.buffer_type.name == "TRACE" else desc.buffer_type.name,
        }

    def on_allocate(self, mesh: Any, desc: Any) -> None:
        self._add("buffer_allocate", self._params(mesh, desc))

    def on_deallocate(self, mesh: Any, desc: Any) -> None:
        self._add("buffer_deallocate", self._params(mesh, desc))


def begin_graph_capture(run_mode: RunMode = RunMode.NORMAL) -> None:
    """Start recording allocator events (nested captures are allowed)."""
    _device.GRAPH_LISTENERS.append(_Capture())


def disable_python_io_recording() -> None:
    """Real ttnn records Python op inputs/outputs during graph capture; the emulator never does."""


def enable_python_io_recording() -> None:
    """See disable_python_io_recording."""


def end_graph_capture() -> list[dict[str, Any]]:
    """Stop the innermost capture and return its nodes."""
    if not _device.GRAPH_LISTENERS:
        raise RuntimeError("ttnn emulator: end_graph_capture without begin_graph_capture")
    capture = _device.GRAPH_LISTENERS.pop()
    capture._add("capture_end", {})
    return capture.nodes
