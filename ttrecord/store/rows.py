"""The plain rows the reader returns, and the timeline filter.

Kept apart from the query code so a viewer can build filters and hold rows without caring
how they were read.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ttrecord.events import BufferRef


@dataclass(frozen=True, slots=True)
class SessionInfo:
    path: str
    id: str
    script: str
    argv: list[str]
    cwd: str
    python: str
    ttnn_version: str | None
    backend: str
    backend_reason: str | None
    host: str
    pid: int | None
    started_at: float
    ended_at: float | None
    status: str
    exit_code: int | None
    signal: int | None
    error_type: str | None
    error_message: str | None
    traceback: str | None
    last_call: int | None
    options: dict[str, Any]


@dataclass(frozen=True, slots=True)
class BufferRow:
    id: int
    buffer: BufferRef
    alloc_seq: int
    free_seq: int | None
    alloc_phase: str | None


@dataclass(frozen=True, slots=True)
class TraceRow:
    id: int
    device: int
    trace_id: int
    cq: int | None
    begin_seq: int
    end_seq: int | None
    release_seq: int | None
    ops: int
    executions: int


@dataclass(frozen=True, slots=True)
class DeviceRow:
    id: int
    arch: str | None
    num_dram_banks: int | None
    num_l1_banks: int | None
    trace_region_size: int | None
    open_seq: int | None
    close_seq: int | None
    info: dict[str, Any]


@dataclass(frozen=True, slots=True)
class TimelineRow:
    """One event as a viewer lists it: flat columns fetched in one query per page."""

    seq: int
    phase: str
    kind: str
    name: str
    device: int | None
    trace: int | None
    file: str | None
    line: int | None
    dur_ns: int | None
    status: str
    error: str | None
    address: int | None  # the buffer's address, for alloc/free
    tensors: tuple[tuple[str, int], ...]  # (role, address) of device tensors, in order
    cq: int | None = None  # the command queue the call named (cq_id), if any
    queue: dict | None = None  # args["queue"]: {"cq", "blocking", "event"} (recorder/queues.py)


@dataclass(frozen=True, slots=True)
class EventFilter:
    """What a timeline shows. Empty sets and None mean 'any'."""

    phases: frozenset[str] = frozenset()
    kinds: frozenset[str] = frozenset()
    name: str | None = None  # substring of the op name
    device: int | None = None
    trace: int | None = None
    text: str | None = None  # substring of name, error or call-site file
    top_level: bool = False  # only the user's own calls, not nested ones
    seqs: frozenset[int] = field(default_factory=frozenset)

    def where(self) -> tuple[str, list[Any]]:
        clauses: list[str] = []
        params: list[Any] = []
        if self.phases:
            clauses.append(f"e.phase IN ({','.join('?' * len(self.phases))})")
            params += sorted(self.phases)
        if self.kinds:
            clauses.append(f"e.kind IN ({','.join('?' * len(self.kinds))})")
            params += sorted(self.kinds)
        if self.name:
            clauses.append("e.name LIKE ?")
            params.append(f"%{self.name}%")
        if self.device is not None:
            clauses.append("e.device = ?")
            params.append(self.device)
        if self.trace is not None:
            clauses.append("e.trace = ?")
            params.append(self.trace)
        if self.text:
            clauses.append(
                "(e.name LIKE ? OR e.error LIKE ? OR e.callsite IN"
                " (SELECT id FROM callsites WHERE file LIKE ?))"
            )
            params += [f"%{self.text}%"] * 3
        if self.top_level:
            clauses.append("e.parent IS NULL")
        if self.seqs:
            clauses.append(f"e.seq IN ({','.join('?' * len(self.seqs))})")
            params += sorted(self.seqs)
        return (" AND ".join(clauses) or "1"), params
