"""Buffers an op allocates and frees inside one call, seen through ttnn's C++ graph capture.

A snapshot diff around a call only sees the buffers that survive it. Some ops (reductions,
for one) allocate a scratch buffer, write it and free it before returning; captured in a
trace, the replay writes that freed address again every time. So while a trace capture is
active the recorder wraps each op in `ttnn._ttnn.graph` capture (the C++ one: no Python I/O
recording, which would import torch) and reports such temporaries. Nothing here reads device
memory or synchronizes. If the backend cannot do graph capture, the feature turns itself off.
"""

from __future__ import annotations

from typing import Any

Buffer = tuple  # (device, buffer_type name, address, size)


class Temporaries:
    def __init__(self, ttnn: Any) -> None:
        graph = getattr(getattr(ttnn, "_ttnn", None), "graph", None)
        run_mode = getattr(getattr(graph, "RunMode", None), "NORMAL", None)
        self._graph: Any = graph if run_mode is not None else None
        self._run_mode = run_mode
        self.enabled = self._graph is not None

    def begin(self) -> bool:
        """Start a graph capture around one op; False when graph capture is unavailable."""
        if not self.enabled:
            return False
        try:
            self._graph.begin_graph_capture(self._run_mode)
            return True
        except Exception:
            self.enabled = False
            return False

    def end(self) -> list[Buffer]:
        """Stop the capture; the buffers allocated and freed inside it, in allocation order."""
        try:
            nodes = self._graph.end_graph_capture()
        except Exception:
            self.enabled = False
            return []
        open_: dict[tuple, Buffer] = {}
        found: list[Buffer] = []
        for node in nodes:
            kind = node.get("node_type")
            if kind not in ("buffer_allocate", "buffer_deallocate"):
                continue
            p = node.get("params") or {}
            try:
                key = (int(p.get("device_id", 0)), str(p["type"]), int(p["address"]))
                size = int(p["max_size_per_bank"])
            except (KeyError, TypeError, ValueError):
                continue
            if kind == "buffer_allocate":
                open_[key] = (*key, size)
            elif key in open_:
                found.append(open_.pop(key))
        return found
