"""Builds event streams and session files by hand, for tests and benchmarks.

A `SessionBuilder` plays the part of the recorder: each method appends the event a real run
would produce, numbering them in order, so a detector test reads like the program it models
and a benchmark can make a million-event session through the real writer.
"""

from __future__ import annotations

import os
from dataclasses import replace
from typing import Any

from ttrecord.events import BufferRef, CallSite, Event, Kind, Phase, SessionStatus, Status, TensorRef
from ttrecord.store.writer import SessionWriter

TILE_BYTES = 2048  # one 32x32 bf16 tile


def tensor(buf: BufferRef, shape: tuple[int, ...] = (32, 32), tensor_id: int | None = None) -> TensorRef:
    return TensorRef(
        tensor_id=tensor_id if tensor_id is not None else buf.address,
        storage="device",
        shape=shape,
        dtype="BFLOAT16",
        layout="TILE",
        memory_config=f"{buf.buffer_type} interleaved",
        buffer=buf,
    )


def host_tensor(shape: tuple[int, ...] = (32, 32)) -> TensorRef:
    return TensorRef(tensor_id=None, storage="host", shape=shape, dtype="BFLOAT16", layout="TILE")


class SessionBuilder:
    """Appends events with increasing seqs and a phase that follows the trace calls."""

    def __init__(self, file: str = "model.py", device: int = 0) -> None:
        self.file = file
        self.device = device
        self.events: list[Event] = []
        self._capturing: int | None = None
        self._replaying: int | None = None
        self._next_trace = 0
        self._t = 0
        self.region: str | None = None  # audit region stamped on new events (begin_region)
        self._region_instances: dict[str, int] = {}

    @property
    def phase(self) -> Phase:
        if self._capturing is not None:
            return Phase.CAPTURE
        return Phase.REPLAY if self._replaying is not None else Phase.EAGER

    def _add(self, kind: Kind, name: str, line: int | None, **fields: Any) -> Event:
        self._t += 1000
        fields.setdefault("device", self.device)
        fields.setdefault("trace", self._capturing if self._capturing is not None else self._replaying)
        if self.region is not None:
            fields.setdefault("region", self.region)
        ev = Event(
            seq=len(self.events) + 1,
            kind=kind,
            name=name,
            phase=fields.pop("phase", self.phase),
            t_ns=self._t,
            dur_ns=500 if kind not in (Kind.ALLOC, Kind.FREE) else None,
            callsite=fields.pop("callsite", CallSite(self.file, line, "main") if line is not None else None),
            **fields,
        )
        self.events.append(ev)
        return ev

    def alloc(self, address: int, size: int = TILE_BYTES, buffer_type: str = "DRAM",
              **fields: Any) -> BufferRef:  # fmt: skip
        """`fields` such as parent=seq (the call that allocated) go on the event."""
        buf = BufferRef(self.device, buffer_type, address, size, TILE_BYTES, 1)
        self._add(Kind.ALLOC, "alloc", None, buffer=buf, **fields)
        return buf

    def free(self, buf: BufferRef, **fields: Any) -> None:
        self._add(Kind.FREE, "free", None, buffer=buf, **fields)

    def begin_region(self, name: str, line: int) -> Event:
        """Audit mode: enter a would-be capture region; later events carry its name."""
        instance = self._region_instances.get(name, 0)
        self._region_instances[name] = instance + 1
        self.region = name
        return self._add(Kind.REGION_BEGIN, "region_begin", line,
                         args={"region": name, "instance": instance})  # fmt: skip

    def end_region(self, line: int) -> Event:
        name, self.region = self.region, None
        assert name is not None, "end_region() without begin_region()"
        return self._add(Kind.REGION_END, "region_end", line, region=name,
                         args={"region": name, "instance": self._region_instances[name] - 1})  # fmt: skip

    def op(self, name: str, inputs: list[BufferRef], outputs: list[BufferRef], line: int,
           args: dict | None = None, **fields: Any) -> Event:  # fmt: skip
        return self._add(
            Kind.OP, name, line, args=args,
            inputs=tuple(tensor(b) for b in inputs), outputs=tuple(tensor(b) for b in outputs),
            **fields,
        )  # fmt: skip

    def note(self, name: str, line: int | None, args: dict | None = None, **fields: Any) -> Event:
        """A point note, e.g. `corruptible_scope_begin` with args {"device": id}."""
        return self._add(Kind.NOTE, name, line, args=args, **fields)

    def h2d(self, target: BufferRef | None, line: int, name: str = "copy_host_to_device_tensor",
            **fields: Any) -> Event:  # fmt: skip
        outs = (tensor(target),) if target is not None else ()
        return self._add(Kind.H2D, name, line, inputs=(host_tensor(),), outputs=outs, **fields)

    def d2h(self, source: BufferRef, line: int, name: str = "to_torch", **fields: Any) -> Event:
        return self._add(
            Kind.D2H, name, line, inputs=(tensor(source),), outputs=(host_tensor(),), **fields
        )

    def sync(self, line: int, name: str = "synchronize_device", **fields: Any) -> Event:
        return self._add(Kind.SYNC, name, line, **fields)

    def open_device(self, line: int = 1, trace_region_size: int = 1 << 20) -> Event:
        args = {"arch": "blackhole", "num_dram_banks": 8, "num_l1_banks": 130,
                "trace_region_size": trace_region_size}  # fmt: skip
        return self._add(Kind.DEVICE_OPEN, "open_device", line, args=args)

    def begin_trace(self, line: int) -> int:
        trace_id = self._next_trace
        self._next_trace += 1
        self._add(Kind.TRACE_BEGIN, "begin_trace_capture", line, trace=trace_id)
        self._capturing = trace_id
        return trace_id

    def end_trace(self, trace_id: int, line: int) -> None:
        self._add(Kind.TRACE_END, "end_trace_capture", line, trace=trace_id)
        self._capturing = None

    def execute(self, trace_id: int, line: int, blocking: bool = True) -> Event:
        ev = self._add(
            Kind.TRACE_EXECUTE, "execute_trace", line, trace=trace_id, phase=Phase.REPLAY,
            args={"blocking": blocking},
        )  # fmt: skip
        return ev

    def release(self, trace_id: int, line: int) -> None:
        self._add(Kind.TRACE_RELEASE, "release_trace", line, trace=trace_id)

    def raised(self, error: str) -> Event:
        """Mark the last call as having raised (e.g. a TT_FATAL)."""
        last = self.events[-1]
        self.events[-1] = replace(last, status=Status.RAISED, error=error)
        return self.events[-1]

    def write(self, path: str | os.PathLike[str], status: SessionStatus = SessionStatus.OK,
              script: str | None = None, backend: str = "emulator") -> str:  # fmt: skip
        writer = SessionWriter(path)
        writer.start(script=script or self.file, argv=[script or self.file], backend=backend)
        writer.add(self.events)
        writer.finish(status, exit_code=0 if status is SessionStatus.OK else 1)
        writer.close()
        return os.fspath(path)


def store_current_findings(path: str | os.PathLike[str], findings: list[Any]) -> None:
    """Store `findings` stamped as this analysis's current ones for the session at `path`, so
    every reader (`findings_for`) shows them as if `ttrecord check` had found them: planted
    findings for tests of what viewers draw. Store them after the last change to the session
    (a later change makes them stale, and readers analyse it again)."""
    from ttrecord.analysis.check import stamp_of
    from ttrecord.store.reader import Session
    from ttrecord.store.writer import replace_findings

    with Session.open(str(path)) as session:
        stamp = stamp_of(session)
    replace_findings(str(path), findings, stamp)
