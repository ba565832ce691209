"""The data a drift diff produces: plain frozen records, so the CLI and the UI only render them.

A report pairs two op sequences (two captures, or a prep run and its capture) op by op. Every
row of `DriftReport.pairs` is one aligned pair or one op present on one side only; the rest of
the report explains the rows: where the runs first diverged, which live allocation before the
capture most likely shifted the layout, how addresses moved per device and buffer type, and
whether one run's baked addresses land on buffers the other run keeps live while replaying.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any, NamedTuple

from ttrecord.events import BufferRef


class PairStatus(str, Enum):
    SAME = "same"
    CHANGED = "changed"
    ONLY_A = "only_a"
    ONLY_B = "only_b"

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True, slots=True)
class CaptureRef:
    """Which op sequence of which session one side of the diff is."""

    path: str
    number: int  # 1-based, in begin order within the session
    device: int
    trace_id: int
    begin_seq: int
    end_seq: int | None
    prep: bool = False  # the prep run before capture `number`, not the capture itself

    @property
    def label(self) -> str:
        name = f"{Path(self.path).name}:{self.number}"
        return f"{name} prep run" if self.prep else name


class Tensor(NamedTuple):
    """An op's input or output as a replay sees it. Tuples, so a whole tensor compares at once
    (`tensor[:COMPARED]`); a capture holds hundreds of thousands of them."""

    storage: str  # "device" | "host"
    shape_json: str | None  # as stored, e.g. "[1,32,1024]"; see `shape`
    dtype: str | None
    layout: str | None
    memory_config: str | None
    buffer_type: str | None  # None for host tensors
    address: int | None
    size: int | None  # bank-local bytes
    device: int | None

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(json.loads(self.shape_json)) if self.shape_json else ()

    @property
    def buffer(self) -> BufferRef | None:
        if self.address is None or self.buffer_type is None:
            return None
        return BufferRef(self.device or 0, self.buffer_type, self.address, self.size or 0)


COMPARED = 8  # Tensor fields compared between runs: all but the device
TENSOR_FIELDS = Tensor._fields[:COMPARED]


class CapturedOp(NamedTuple):
    """One top-level op of a capture (or prep run), in the order it was called."""

    seq: int
    index: int  # type: ignore[assignment]  # position within its capture, from 0 (hides tuple.index)
    name: str
    file: str
    line: int
    function: str
    inputs: tuple[Tensor, ...]
    outputs: tuple[Tensor, ...]
    occurrence: int = 0  # how many earlier ops of this capture share (name, file, line)

    @property
    def key(self) -> tuple[str, str, int]:
        return (self.name, self.file, self.line)

    @property
    def site(self) -> str:
        return f"{self.file}:{self.line}"


@dataclass(frozen=True, slots=True)
class LiveBuffer:
    """A buffer live when a capture began, with the call that allocated it."""

    buffer: BufferRef
    alloc_seq: int
    call: str  # the op or transfer that made it ("" if unknown)
    file: str
    line: int
    function: str

    @property
    def key(self) -> tuple:
        b = self.buffer
        return (b.buffer_type, b.size, self.call, self.file, self.line)


@dataclass(slots=True)
class Capture:
    """One side of a diff, loaded from a session: its ops and the allocator state around it."""

    ref: CaptureRef
    ops: list[CapturedOp]
    live_at_start: list[LiveBuffer]  # live when the capture (or prep run) began
    replay_live: list[tuple[BufferRef, int]]  # (buffer, alloc_seq) live while it can replay
    has_replay: bool = True  # False for a prep run or a capture that never ended


class FieldChange(NamedTuple):
    slot: str  # "in0", "out1", or "in"/"out" for a changed tensor count
    field: str  # address, size, buffer_type, shape, dtype, layout, memory_config, storage, count
    a: Any
    b: Any


class OpPair(NamedTuple):
    a: CapturedOp | None
    b: CapturedOp | None
    changes: tuple[FieldChange, ...] = ()
    # How the pair was aligned: "exact" (same op, call site and tensor signature), "signature"
    # (another call site), "call_site" (other tensors), "op" (another call site and other
    # tensors: prep runs only), "reordered"; "" for an unmatched op.
    match: str = ""

    @property
    def status(self) -> PairStatus:
        if self.a is None:
            return PairStatus.ONLY_B
        if self.b is None:
            return PairStatus.ONLY_A
        return PairStatus.CHANGED if self.changes else PairStatus.SAME


@dataclass(frozen=True, slots=True)
class LiveDifference:
    """A buffer live before one run's capture with no counterpart in the other run."""

    run: str  # "a" or "b": the run that has it
    live: LiveBuffer


@dataclass(frozen=True, slots=True)
class Cause:
    """The allocation that most likely shifted the layout at the first divergence, or (with
    `difference` None) a pair of ops that ran in another order."""

    difference: LiveDifference | None
    # The address the other run used there, which this buffer now occupies (None: only near).
    displaced: int | None
    # For a buffer both runs keep live (same call, type and size) but at different addresses:
    # the other run's one. None for an extra or missing buffer.
    counterpart: LiveBuffer | None = None
    reordered: OpPair | None = None  # the first pair of ops that ran in another order


@dataclass(frozen=True, slots=True)
class DriftGroup:
    """How the buffers of one device and buffer type moved between the runs."""

    device: int
    buffer_type: str
    buffers: int  # distinct buffers of run A the aligned ops use
    moved: int
    kind: str  # "unchanged" | "constant_offset" | "reshuffled"
    offsets: tuple[tuple[int, int], ...]  # (offset B - A, buffers), most common first


@dataclass(frozen=True, slots=True)
class Overlap:
    """A range one run's trace bakes in, overlapping a buffer live in the other run's replay."""

    trace_run: str  # "a" or "b": whose trace range
    buffer_type: str
    device: int
    address: int
    size: int
    op_seq: int  # first op of the trace run that uses the range
    other_address: int
    other_size: int
    other_alloc_seq: int


@dataclass(frozen=True, slots=True)
class OverlapSummary:
    checked: bool  # False when a side has no replay phase (prep run, unfinished capture)
    a_over_b: int = 0
    b_over_a: int = 0
    examples: tuple[Overlap, ...] = ()


@dataclass(slots=True)
class DriftReport:
    a: CaptureRef
    b: CaptureRef
    mode: str  # "captures" | "prep"
    method: str  # how the ops were aligned: "identical" | "myers" | "anchored"
    pairs: list[OpPair]
    first_divergence: int | None  # index into pairs
    cause: Cause | None
    # Rows whose changed inputs no earlier op of the run wrote; in prep mode only these (and
    # inserted or removed ops) are drift.
    changed_inputs: list[int] = field(default_factory=list)
    live_differences: list[LiveDifference] = field(default_factory=list)
    groups: list[DriftGroup] = field(default_factory=list)
    overlaps: OverlapSummary = field(default_factory=lambda: OverlapSummary(checked=False))
    key: str = "call_site"  # what the search aligned on: "call_site" | "signature"

    def matched(self) -> dict[str, int]:
        """How many rows were aligned each way, and how many ops stayed unmatched."""
        counts = dict.fromkeys(("exact", "signature", "call_site", "op", "reordered",
                                "unmatched_a", "unmatched_b"), 0)  # fmt: skip
        for p in self.pairs:
            kind = p.match or ("unmatched_b" if p.a is None else "unmatched_a")
            counts[kind] += 1
        return counts

    def count(self, status: PairStatus) -> int:
        return sum(1 for p in self.pairs if p.status is status)

    @property
    def drift(self) -> bool:
        return self.first_divergence is not None
