"""ttnn 0.81.1's trace allocation tracker (`ttnn/tools/trace_allocation_tracker.py`), emulated.

With `TT_METAL_TRACE_ALLOC_TRACKING=1` (read once at import, like tt-metal's run-time options)
every device buffer allocated while a trace is live (captured and not released) is counted
against that trace until it is freed, unless it was allocated inside
`corruptible_allocation_scope(mesh_device)` or acknowledged with `acknowledge_corruptible`;
program-cache buffers (kernel binaries) count too unless
`TT_METAL_TRACE_ALLOC_SKIP_PROGRAM_CACHE=1`. `ttnn.execute_trace` then runs
`TraceAllocationTracker.verify_before_replay` first, which raises the real text when any such
buffer is alive ("Found N device buffer(s) still alive before trace replay. These will be
corrupted on replay."). Like the real tracker it is coarse: it counts any allocation while a
trace is live, overlapping the trace's memory or not. Without the variable every name is a
no-op and `execute_trace` is the plain one.
"""

from __future__ import annotations

import contextlib
import contextvars
import gc
import os
from typing import Any, ClassVar
from collections.abc import Iterator

TRACE_ALLOC_TRACKING = os.environ.get("TT_METAL_TRACE_ALLOC_TRACKING", "0") not in ("", "0")
SKIP_PROGRAM_CACHE = os.environ.get("TT_METAL_TRACE_ALLOC_SKIP_PROGRAM_CACHE", "0") not in ("", "0")
TRACE_ALLOC_DIAGNOSTICS = False  # tracebacks and referrer analysis are not emulated
TRACE_ALLOC_REFERRER_DEPTH = 10

# The allocation context ttnn pushes around each FastOperation (its op name); "program cache"
# while kernel binaries load.
allocation_context: contextvars.ContextVar[str] = contextvars.ContextVar("allocation_context", default="")
PROGRAM_CACHE = "program cache"


def on_allocate(device: Any, unique_id: int) -> None:
    """Count a new buffer against every live trace of the device (tracking only)."""
    if not device.allocations_unsafe or device.corruptible_scopes:
        return
    context = allocation_context.get()
    if context == PROGRAM_CACHE and SKIP_PROGRAM_CACHE:
        return
    for trace_id in device.traces:
        device.unsafe_tracked.setdefault(trace_id, {})[unique_id] = context


def on_free(device: Any, unique_id: int) -> None:
    for tracked in device.unsafe_tracked.values():
        tracked.pop(unique_id, None)


@contextlib.contextmanager
def corruptible_allocation_scope(mesh_device: Any) -> Iterator[None]:
    """Suppress accounting for intentionally corruptible allocations in this scope."""
    if not TRACE_ALLOC_TRACKING:
        yield
        return
    mesh_device.corruptible_scopes = getattr(mesh_device, "corruptible_scopes", 0) + 1
    try:
        yield
    finally:
        mesh_device.corruptible_scopes -= 1


class TraceAllocationTracker:
    """Per-device tracker for allocations made while traces are active."""

    _tracebacks: ClassVar[dict[int, str]] = {}
    _diagnostics_enabled: ClassVar[bool] = TRACE_ALLOC_DIAGNOSTICS
    _referrer_depth: ClassVar[int] = TRACE_ALLOC_REFERRER_DEPTH

    @classmethod
    def acknowledge_corruptible(cls, tensor: Any) -> None:
        """Acknowledge that a tensor's buffer may intentionally be corrupted (a no-op when
        tracking is off); the same checks and messages as ttnn's."""
        if not TRACE_ALLOC_TRACKING:
            return
        from ..tensor import Tensor

        if not isinstance(tensor, Tensor):
            raise TypeError(f"acknowledge_corruptible expects a ttnn.Tensor, got {type(tensor).__name__}")
        if tensor.device() is None:
            raise ValueError("acknowledge_corruptible expects a tensor with device storage")
        if not tensor.is_allocated():
            raise ValueError("acknowledge_corruptible expected an allocated tensor")
        on_free(tensor.device(), tensor.buffer_unique_id())
        cls._tracebacks.pop(tensor.buffer_unique_id(), None)

    @classmethod
    def verify_before_replay(cls, mesh_device: Any, trace_id: Any) -> None:
        """Raise ttnn's RuntimeError when buffers counted against the trace are still alive."""
        live = mesh_device.unsafe_tracked.get(int(trace_id))
        if not live:
            return
        gc.collect()  # as ttnn: unreachable tensors in reference cycles are freed first
        live = mesh_device.unsafe_tracked.get(int(trace_id))
        if not live:
            return
        parts = [f"Found {len(live)} device buffer(s) still alive before trace replay. These will be"
                 " corrupted on replay.\n"]  # fmt: skip
        for buf_id in sorted(live):
            ctx = live[buf_id]
            parts.append(f"Buffer {buf_id}{f' [op: {ctx}]' if ctx else ''}\n")
        parts.append(
            "\nUse ttnn.tools.trace_allocation_tracker.corruptible_allocation_scope() for acknowledged-corruptible "
            "tensors, or ensure temporary tensors are freed before replay."
        )
        raise RuntimeError("".join(parts))


def acknowledge_corruptible(tensor: Any) -> None:
    """Acknowledge that a device tensor's buffer may intentionally be corrupted by trace replay."""
    TraceAllocationTracker.acknowledge_corruptible(tensor)
