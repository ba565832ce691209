"""The event model shared by the recorder, the store and the analysis.

One `Event` is one thing the recorded program did with ttnn: a call (op, transfer, trace
lifecycle, sync, device open/close) or something observed around a call (a buffer allocated or
freed, a warning). Calls carry the tensors they read and wrote as `TensorRef`s; allocations and
frees carry the `BufferRef` the allocator reported. Everything here is plain data so the
recorder can build it cheaply and the store can write it without knowing about ttnn.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import Enum
from typing import Any

from ttrecord.placement import Cores, cores_of, placements_meet


class Kind(str, Enum):
    """What an event is. The stored text of each member is its value (docs/schema.md).

    A kind this ttrecord does not know (a session from a newer recorder) is not an error:
    `Kind(text)` gives an unknown member carrying the text, which readers show as
    "unknown kind <text>" and the rules, matching only the kinds they know, pass over.
    """

    OP = "op"
    H2D = "h2d"
    D2H = "d2h"
    ALLOC = "alloc"
    FREE = "free"
    TRACE_BEGIN = "trace_begin"
    TRACE_END = "trace_end"
    TRACE_EXECUTE = "trace_execute"
    TRACE_RELEASE = "trace_release"
    SYNC = "sync"
    DEVICE_OPEN = "device_open"
    DEVICE_CLOSE = "device_close"
    WARNING = "warning"
    NOTE = "note"  # its name is a `NoteKind` (or a note kind this ttrecord does not know)
    # Audit mode: a would-be capture region entered/left (args: {"region": qualname}).
    REGION_BEGIN = "region_begin"
    REGION_END = "region_end"
    # Replay verification: how one verified replay compared with an eager re-run of its ops.
    VERIFY = "verify"

    def __str__(self) -> str:
        return self.value

    @classmethod
    def _missing_(cls, value: object) -> Kind | None:
        """An unknown member for a kind's text this ttrecord does not know (see the class)."""
        if not isinstance(value, str):
            return None
        member = str.__new__(cls, value)
        member._name_ = _UNKNOWN
        member._value_ = value
        if len(cls._value2member_map_) < _MAX_UNKNOWN_KINDS:  # a hostile file cannot grow it
            cls._value2member_map_[value] = member
        return member

    @property
    def known(self) -> bool:
        """False for a kind read from a session written by a newer ttrecord."""
        return self._name_ != _UNKNOWN

    @property
    def label(self) -> str:
        """How a reader prints the kind: its text, or "unknown kind <text>"."""
        return self._value_ if self.known else f"unknown kind {self._value_}"


_UNKNOWN = "UNKNOWN"
_MAX_UNKNOWN_KINDS = 256


def kind_label(text: str) -> str:
    """How a reader prints a kind's stored text (see `Kind.label`)."""
    return Kind(text).label


class NoteKind(str, Enum):
    """The names of NOTE events: what the recorder noticed around a call.

    Like kinds, a note kind is part of the format (docs/schema.md); readers carry a note kind
    they do not know through as a note and the rules ignore it.
    """

    PROGRAM_CACHE_MISS = "program_cache_miss"  # a call compiled a program (args: the cache)
    FORK = "fork"  # the program forked; the child's calls are not recorded
    RECORDER_ERROR = "recorder_error"  # the recorder failed on a call and let it through
    NATIVE_BENCH = "native_bench"  # a native benchmark entry
    CORRUPTIBLE_SCOPE_BEGIN = "corruptible_scope_begin"  # ttnn's trace allocation tracker
    CORRUPTIBLE_SCOPE_END = "corruptible_scope_end"  # opt-out scope (args {"device": id})
    PROGRAM_CACHE_CLEAR = "program_cache_clear"  # the program cache switched off and cleared
    PROGRAM_CACHE_ENABLE = "program_cache_enable"  # ... or on (args {"device", "method"})
    REFERRERS = "referrers"  # at an execute_trace: buffers alive since its capture, and holders
    # Schema version 2:
    SUB_DEVICE_MANAGER = "sub_device_manager"  # a sub-device manager method on a device
    GLOBAL_SEMAPHORE = "global_semaphore"  # a global semaphore created, reset, used or freed

    def __str__(self) -> str:
        return self.value


class Phase(str, Enum):
    EAGER = "eager"
    # Eager calls right before a capture that repeat the captured call sites; tagged when the
    # session is finalized, since only the capture tells which calls were its prep run.
    PREP = "prep"
    CAPTURE = "capture"
    REPLAY = "replay"

    def __str__(self) -> str:
        return self.value


class Status(str, Enum):
    """How a call ended. DIED/HUNG mark the call that was running when the process ended."""

    OK = "ok"
    RAISED = "raised"
    DIED = "died"
    HUNG = "hung"

    def __str__(self) -> str:
        return self.value


class SessionStatus(str, Enum):
    RUNNING = "running"
    OK = "ok"
    ERROR = "error"
    CRASHED = "crashed"
    HUNG = "hung"
    INTERRUPTED = "interrupted"

    def __str__(self) -> str:
        return self.value


# Call kinds: events that have a duration and can be the call that died.
CALL_KINDS = frozenset(
    {
        Kind.OP,
        Kind.H2D,
        Kind.D2H,
        Kind.TRACE_BEGIN,
        Kind.TRACE_END,
        Kind.TRACE_EXECUTE,
        Kind.TRACE_RELEASE,
        Kind.SYNC,
        Kind.DEVICE_OPEN,
        Kind.DEVICE_CLOSE,
    }
)


@dataclass(frozen=True, slots=True)
class CallSite:
    """The first frame outside ttnn and ttrecord, plus a short stack (innermost first)."""

    file: str
    line: int
    function: str
    stack: tuple[tuple[str, int, str], ...] = ()


@dataclass(frozen=True, slots=True)
class BufferRef:
    """A device buffer as the allocator sees it.

    `size` is the bank-local footprint (`ceil(pages / banks) * aligned_page_size`), so two
    buffers of one device and buffer type overlap when `[address, address + size)` ranges
    intersect and their `cores` meet (`ttrecord.placement`: a sharded buffer holds its range
    only on its grid's cores; None is every bank). `cores` is not part of its identity.
    """

    device: int
    buffer_type: str  # "DRAM" | "L1" | "L1_SMALL" | "TRACE" | ...
    address: int
    size: int
    page_size: int | None = None
    num_pages: int | None = None
    tensor_id: int | None = None
    cores: Cores | None = field(default=None, compare=False)

    @property
    def end(self) -> int:
        return self.address + self.size

    def overlaps(self, other: BufferRef) -> bool:
        return (
            self.device == other.device
            and self.buffer_type == other.buffer_type
            and self.address < other.end
            and other.address < self.end
            and placements_meet(self.cores, other.cores)
        )

    def placed(self, cores: Cores | None) -> BufferRef:
        """This buffer on `cores` (the grid of the tensor that holds it)."""
        return self if cores is None or cores == self.cores else replace(self, cores=cores)

    @classmethod
    def of_tensor(cls, device: int, buffer_type: str, address: int, size: int,
                  memory_config: str | None, tensor_id: int | None = None) -> BufferRef:  # fmt: skip
        """A tensor's buffer, on the cores its memory-config text names (`ttrecord.placement`)."""
        buf = cls(device, buffer_type, address, size, None, None, tensor_id)
        if memory_config is not None and " on (" in memory_config:
            return buf.placed(cores_of(memory_config))
        return buf


@dataclass(frozen=True, slots=True)
class TensorRef:
    """A tensor argument or result of a call: metadata only, never its data."""

    tensor_id: int | None
    storage: str  # "device" | "host"
    shape: tuple[int, ...] = ()
    dtype: str | None = None
    layout: str | None = None
    memory_config: str | None = None
    buffer: BufferRef | None = None  # None for host tensors

    @property
    def device_buffer(self) -> BufferRef:
        """`buffer` of a tensor known to be on a device (typed as such)."""
        assert self.buffer is not None, "a host tensor has no device buffer"
        return self.buffer


@dataclass(slots=True)
class Event:
    seq: int
    kind: Kind
    name: str
    phase: Phase = Phase.EAGER
    t_ns: int = 0
    dur_ns: int | None = None
    thread: int = 0
    device: int | None = None
    cq: int | None = None
    trace: int | None = None
    parent: int | None = None  # seq of the user call this nested call ran inside
    callsite: CallSite | None = None
    status: Status = Status.OK
    error: str | None = None  # exception text (e.g. the TT_FATAL message) for RAISED calls
    args: dict[str, Any] | None = None  # scalar arguments, JSON-serialisable
    inputs: tuple[TensorRef, ...] = ()
    outputs: tuple[TensorRef, ...] = ()
    buffer: BufferRef | None = None  # for ALLOC / FREE
    region: str | None = None  # audit region active when the event happened

    @property
    def allocation(self) -> BufferRef:
        """`buffer` of an ALLOC or FREE event, which always has one (typed as such)."""
        assert self.buffer is not None, f"event {self.seq} ({self.kind}) has no buffer"
        return self.buffer


# The program cache switched on a device (`device.disable_and_clear_program_cache()`, ...): notes
# with args {"device": id, "method": name} at the user's line.
PROGRAM_CACHE_CLEAR = NoteKind.PROGRAM_CACHE_CLEAR.value
PROGRAM_CACHE_ENABLE = NoteKind.PROGRAM_CACHE_ENABLE.value

# At an execute_trace, buffers allocated after that trace's capture and still alive, with the
# Python references holding them: a note under the execute_trace call, args
# {"buffers": [{"buffer_type", "address", "held_by": ["function: name[0].attr", ...],
#               "at": ["file:line" of each holder's frame, ...]}]}.
REFERRERS = NoteKind.REFERRERS.value

# ttnn's trace allocation tracker opt-outs (`ttnn.tools.trace_allocation_tracker`), as recorded:
# `acknowledge_corruptible` is a call on its tensor; entering and leaving a
# `corruptible_allocation_scope` are notes (args {"device": id}).
ACKNOWLEDGE_CORRUPTIBLE = "acknowledge_corruptible"
CORRUPTIBLE_SCOPE = "corruptible_allocation_scope"
CORRUPTIBLE_SCOPE_BEGIN = NoteKind.CORRUPTIBLE_SCOPE_BEGIN.value
CORRUPTIBLE_SCOPE_END = NoteKind.CORRUPTIBLE_SCOPE_END.value
