"""Errors and warnings shaped like the real ones.

Real ttnn raises `RuntimeError` from C++ `TT_FATAL(cond, fmt, ...)` with the text
`TT_FATAL @ <file>:<line>: <cond>\\ninfo:\\n<message>` followed by a backtrace.
Tools (and the recorder) match on the message text, so the emulator produces
the same texts. File/line are those of the tt-metal source that raises the
error; only the read-in-capture line (fd_mesh_command_queue.cpp:851) was
measured on ttnn 0.81.1, the others are close approximations.
Other emulator-only failures (allocator, shapes) use the same layout with
file ":0".
"""

from __future__ import annotations

import enum
import os
import sys
import warnings
from types import FrameType
from typing import Any

_FD_CQ = "/project/tt_metal/distributed/fd_mesh_command_queue.cpp"
_MESH_DEVICE = "/project/tt_metal/distributed/mesh_device.cpp"
_MESH_TRACE = "/project/tt_metal/distributed/mesh_trace.cpp"

READS_IN_CAPTURE = "Reads are not supported during trace capture."
WRITES_IN_CAPTURE = "Writes are not supported during trace capture. trace id: {}"
EVENTS_IN_CAPTURE = "Event Synchronization is not supported during trace capture."
TRACE_REGION_TOO_SMALL = (
    "Creating trace buffers of size {}B on MeshDevice {}, but only {}B is allocated for trace region."
)
# trace_region_size=0 (dynamic trace buffers, top-down in DRAM): the buffer must sit above the
# DRAM the capture allocated or freed and above every live trace's mark (0.81.1's wording).
TRACE_BUFFER_OVER_ALLOCATIONS = (
    "Trace buffer at address {} overlaps with buffers allocated during trace capture (allocation high"
    " water mark: {}). Reduce allocations during trace capture or set a non-zero trace_region_size."
)
TRACE_BUFFER_OVER_DELETIONS = (
    "Trace buffer at address {} overlaps with buffers deallocated during trace capture (deletion high"
    " water mark: {}). Avoid deallocating DRAM buffers during trace capture or set a non-zero"
    " trace_region_size."
)
TRACE_BUFFER_OVER_BOTH = (
    "Trace buffer at address {} overlaps with DRAM activity during trace capture. Allocation high"
    " water mark: {}, Deletion high water mark: {}. Reduce allocations during trace capture or set a"
    " non-zero trace_region_size."
)
TRACE_BUFFER_OVER_LIVE_TRACE = (
    "Trace buffer at address {} overlaps with DRAM activity captured by another live trace (maximum"
    " live trace high water mark: {}). Release the existing trace before capturing this trace or set"
    " a non-zero trace_region_size."
)
TRACE_ALLOCATION_UNSAFE = (
    "Allocating device buffers is potentially unsafe due to the existence of an active trace. "
    "These buffers may be corrupted once a trace is executed if they are not released before then. "
    "Use the trace allocation tracker to verify."
)


def tt_fatal(file: str, line: int, condition: str, message: str) -> RuntimeError:
    """A RuntimeError whose text has the layout of a real TT_FATAL (ttnn 0.81.1 wheels
    report sources under /project/); the backtrace section says there are no native frames."""
    return RuntimeError(
        f"TT_FATAL @ {file}:{line}: {condition}\ninfo:\n{message}\nbacktrace:\n"
        " --- ttrecord.emulator: no native backtrace (emulated device)"
    )


def reads_in_capture() -> RuntimeError:
    return tt_fatal(_FD_CQ, 851, "!trace_id_.has_value()", READS_IN_CAPTURE)


def writes_in_capture(trace_id: int) -> RuntimeError:
    return tt_fatal(_FD_CQ, 817, "!trace_id_.has_value()", WRITES_IN_CAPTURE.format(int(trace_id)))


def events_in_capture() -> RuntimeError:
    return tt_fatal(_FD_CQ, 944, "!trace_id_.has_value()", EVENTS_IN_CAPTURE)


def trace_region_too_small(total: int, mesh_id: int, region: int) -> RuntimeError:
    return tt_fatal(
        _MESH_TRACE,
        80,
        "mesh_cq.device()->get_trace_buffers_size() <= trace_region_size",
        TRACE_REGION_TOO_SMALL.format(total, mesh_id, region),
    )


def trace_buffer_overlaps(address: int, allocated: int, deleted: int, live: int) -> RuntimeError:
    """The dynamic trace buffer landed below DRAM the capture (or a live trace) used."""
    if allocated > address and deleted > address:
        message = TRACE_BUFFER_OVER_BOTH.format(address, allocated, deleted)
    elif deleted > address:
        message = TRACE_BUFFER_OVER_DELETIONS.format(address, deleted)
    elif allocated > address:
        message = TRACE_BUFFER_OVER_ALLOCATIONS.format(address, allocated)
    else:
        message = TRACE_BUFFER_OVER_LIVE_TRACE.format(address, live)
    return tt_fatal(_MESH_TRACE, 122, "false", message)


def cq_already_tracing(cq_id: int, trace_id: int) -> RuntimeError:
    return tt_fatal(
        _MESH_DEVICE,
        1083,
        "!this->mesh_command_queues_[cq_id]->trace_id().has_value()",
        f"CQ {cq_id} is already being used for tracing tid {int(trace_id)}",
    )


def cq_not_tracing(cq_id: int, trace_id: int) -> RuntimeError:
    return tt_fatal(
        _MESH_DEVICE,
        1101,
        "this->mesh_command_queues_[cq_id]->trace_id() == trace_id",
        f"CQ {cq_id} is not being used for tracing tid {int(trace_id)}",
    )


def trace_not_found(trace_id: int, mesh_id: int, manager: int = 0) -> RuntimeError:
    return tt_fatal(
        _MESH_DEVICE,
        1124,
        "trace_buffer != nullptr",
        f"Trace instance {int(trace_id)} must exist on Mesh device {mesh_id}'s "
        f"active sub-device manager {manager}",
    )


# Keep-going mode (`ttrecord run --keep-going`): a TT_FATAL real ttnn raises inside a trace
# capture (a read, a write, an event wait, a compile) is issued as a warning with ttnn's text
# instead, and the call goes on as if made outside the capture, so one run shows every mistake.
KEEP_GOING_ENV = "TTRECORD_EMULATOR_KEEP_GOING"


class FatalInCapture(UserWarning):
    """A TT_FATAL real ttnn raises here, which the emulator went past in keep-going mode; the
    recorder keeps it as a warning event under the call (its message is ttnn's text)."""


def fatal_in_capture(error: RuntimeError) -> None:
    """Raise `error` (a capture-fatal TT_FATAL), or in keep-going mode warn with its text and
    return, so the caller goes on as outside a capture."""
    if os.environ.get(KEEP_GOING_ENV) != "1":
        try:
            raise error
        finally:  # the traceback holds this frame: a local naming the error would be a cycle
            del error  # (as with ttnn's C++ error, the caller's frames die when it is dropped)
    warnings.warn(str(error), FatalInCapture, stacklevel=_user_stacklevel())


class TraceAllocationWarning(UserWarning):
    """ttnn's "Allocating device buffers is potentially unsafe ..." warning.

    Real ttnn logs it through tt-metal's logger (loguru-style line on stderr). The
    emulator issues it through Python's `warnings` module: visible on stderr by
    default, catchable with `warnings.catch_warnings`, and attributed to the user's
    line that allocated (the first frame outside ttrecord), so a recorder hooking
    `warnings.showwarning` sees where it came from.
    """


_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _user_stacklevel() -> int:
    """How many frames up the first caller outside ttrecord (and wrapt) is."""
    frame: FrameType | None = sys._getframe(1)
    level = 1
    while frame is not None:
        filename = frame.f_code.co_filename
        if not (filename.startswith(_PACKAGE_DIR) or f"{os.sep}wrapt{os.sep}" in filename):
            return level
        frame = frame.f_back
        level += 1
    return 1


def warn_unsafe_allocation() -> None:
    """Issue the active-trace allocation warning at the user's allocating line."""
    warnings.warn(TRACE_ALLOCATION_UNSAFE, TraceAllocationWarning, stacklevel=_user_stacklevel())


class NotEmulatedError(AttributeError):
    """A ttnn name (or a form of a call) the emulator does not provide. An AttributeError (so
    `hasattr` and `getattr(ttnn, name, default)` behave), with a message that says what is
    missing."""


def not_emulated(qualified: str) -> NotEmulatedError:
    return NotEmulatedError(f"ttnn emulator: {qualified} is not emulated (see docs/emulator.md)")


class NotEmulatedAttributes:
    """Mixin for the emulated ttnn classes (Tensor, MeshDevice, config types): a public
    attribute the class lacks raises NotEmulatedError naming `ttnn.<Class>.<name>` instead
    of a bare AttributeError; private and dunder names keep the plain error."""

    __slots__ = ()
    _ttnn_name = ""

    def __getattr__(self, name: str) -> object:
        if name.startswith("_"):
            raise AttributeError(name)
        raise not_emulated(f"{self._ttnn_name or 'ttnn.' + type(self).__name__}.{name}")


class NotEmulatedEnumType(enum.EnumMeta):
    """Metaclass of the emulated ttnn enums: a member ttnn 0.81.1 has and the emulator lacks
    (`ttnn.DataType.INT8`) raises NotEmulatedError naming `ttnn.<Enum>.<member>`."""

    def __getattr__(cls, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        member = cls.__dict__.get("_member_map_", {}).get(name)
        if member is not None:
            return member
        raise not_emulated(f"ttnn.{cls.__name__}.{name}")
