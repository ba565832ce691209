"""Trace capture and replay with addresses baked in, as on hardware.

During a capture every device op runs once and is recorded as an `OpRecord`:
the function that computes it (scalars and shapes captured as they were) and
the `BufferDesc` of every buffer it read and wrote. A replay re-runs the
records against the memory as it is *now*: inputs are decoded from the captured
addresses, outputs encoded to the captured addresses. Nothing refers to the
tensors of the capture, so

* an intermediate freed at the end of capture is really free, and a buffer
  allocated later on its address is overwritten by the next replay;
* new data in a new tensor never reaches the trace (it reads the old address);
* a freed and reused input feeds whatever now lives at its address.

Trace command buffers are charged to the device's `trace_region_size`
(`DeviceConfig.trace_bytes_per_op` bytes per captured op, paged as tt-metal's
mesh_trace.cpp does); a capture that does not fit fails with real ttnn's message.
The region is split over the DRAM banks at their top; trace buffers are
TRACE-type buffers there (get_buffers reports them), as measured on ttnn 0.81.1.
"""

from __future__ import annotations

import itertools
from typing import Any, NamedTuple, Optional
from collections.abc import Callable

from . import errors, faults, program_cache, sub_devices
from .allocator import round_up
from .buffer import BufferDesc, DeviceBuffer
from .codec import TensorSpec
from .queues import queues_of
from .types import BufferType

_trace_ids = itertools.count()


class MeshTraceId(int):
    """The id begin_trace_capture returns (an int, printed like ttnn's)."""

    def __new__(cls, arg: int = 0, /) -> MeshTraceId:
        return super().__new__(cls, arg)

    def __repr__(self) -> str:
        return f"MeshTraceId({int(self)})"

    __str__ = int.__repr__


class OpRecord(NamedTuple):
    """One captured op: how to compute it and where it reads and writes."""

    name: str
    fn: Callable[..., Any]
    inputs: tuple[tuple[BufferDesc, TensorSpec], ...]
    outputs: tuple[tuple[BufferDesc, TensorSpec], ...]
    chips: Optional[tuple[int, ...]] = None  # None: every chip of the mesh
    collective: bool = False  # fn takes every chip's inputs and returns every chip's outputs
    program: Any = None  # program_cache.Program whose binary the replay runs


class Trace:
    """A captured trace on one device and command queue."""

    def __init__(self, trace_id: MeshTraceId, cq_id: int) -> None:
        self.trace_id = trace_id
        self.cq_id = cq_id
        self.records: list[OpRecord] = []
        self.buffer: Optional[DeviceBuffer] = None
        self.size = 0
        self.dram_high_water_mark = 0  # trace_region_size=0: the top of DRAM its capture used
        self.manager = 0  # the sub-device manager it belongs to (sub_devices.py)

    def reads(self) -> list[BufferDesc]:
        return [d for r in self.records for d, _ in r.inputs]

    def writes(self) -> list[BufferDesc]:
        return [d for r in self.records for d, _ in r.outputs]


def run_record(device: Any, record: OpRecord) -> None:
    """Execute one captured op against the device memory as it is now."""
    chips = record.chips if record.chips is not None else range(device.num_chips)
    words = program_cache.garbage(device, record.program)
    if words is not None:  # its binary was overwritten: the program writes garbage
        for chip in chips:
            for desc, spec in record.outputs:
                result = device.read_values(desc, spec, chip)
                device.write_values(desc, spec, program_cache.garbage_like(words, result), chip)
        return
    if record.collective:
        per_chip = [[device.read_values(desc, spec, chip) for desc, spec in record.inputs] for chip in chips]
        for chip, results in zip(chips, record.fn(per_chip)):
            _store(device, record, results, chip)
        return
    for chip in chips:
        values = [device.read_values(desc, spec, chip) for desc, spec in record.inputs]
        _store(device, record, record.fn(*values), chip)


def _store(device: Any, record: OpRecord, results: Any, chip: int) -> None:
    if not isinstance(results, tuple):
        results = (results,)
    for (desc, spec), result in zip(record.outputs, results):
        device.write_values(desc, spec, result, chip)


def interleaved_page_size(buf_size: int, num_banks: int, min_size: int, max_size: int) -> int:
    """tt-metal's choice of trace buffer page size: the largest power of two in
    [min_size, max_size] that minimises padding to a whole number of bank rows."""
    pick, min_waste = min_size, None
    size = min_size
    while size <= max_size:
        fully_banked = num_banks * size
        waste = round_up(buf_size, fully_banked) - buf_size
        if min_waste is None or waste <= min_waste:
            min_waste, pick = waste, size
        size <<= 1
    return pick


def _cq(cq_id: Optional[int]) -> int:
    return 0 if cq_id is None else int(cq_id)


def begin_trace_capture(mesh_device: Any, *, cq_id: Optional[int] = None) -> MeshTraceId:
    """Start recording device work on `cq_id`; returns the new trace's id."""
    cq = _cq(cq_id)
    trace_id = MeshTraceId(next(_trace_ids))
    with mesh_device.lock:
        queues_of(mesh_device).finish()  # ops in the capture run at once (see queues.py)
        if cq in mesh_device.capturing:
            raise errors.cq_already_tracing(cq, trace_id)
        mesh_device.allocations_unsafe = False  # tt-metal: mark_allocations_safe()
        if mesh_device.trace_region_size == 0:  # tt-metal: begin_dram_high_water_mark_tracking
            mesh_device.dram_marks = [0, 0]
        trace = mesh_device.capturing[cq] = Trace(trace_id, cq)
        trace.manager = sub_devices.active_id(mesh_device)
    return trace_id


def end_trace_capture(mesh_device: Any, trace_id: int, *, cq_id: Optional[int] = None) -> None:
    """Stop recording and commit the trace to the trace region."""
    cq = _cq(cq_id)
    config = mesh_device.config
    with mesh_device.lock:
        trace = mesh_device.capturing.get(cq)
        if trace is None or trace.trace_id != int(trace_id):
            raise errors.cq_not_tracing(cq, trace_id)
        if trace.manager != sub_devices.active_id(mesh_device):  # it stays in capture, as in ttnn
            raise sub_devices.trace_not_in_active(trace_id, mesh_device, replay=False)
        del mesh_device.capturing[cq]
        unpadded = len(trace.records) * config.trace_bytes_per_op
        if unpadded:
            page = interleaved_page_size(
                unpadded, config.num_dram_banks, config.trace_page_min, config.trace_page_max
            )
            padded = round_up(unpadded, page)
        else:  # measured: an empty trace still gets a one-page (1024 B/bank) buffer, sized 0
            page, padded = config.trace_page_min, 0
        total = mesh_device.trace_buffers_size + padded
        dynamic = mesh_device.trace_region_size == 0
        if total > mesh_device.trace_region_size and not dynamic:
            raise errors.trace_region_too_small(total, mesh_device.mesh_id, mesh_device.trace_region_size)
        marks, mesh_device.dram_marks = mesh_device.dram_marks, None
        trace.buffer = mesh_device.allocate_buffer(BufferType.TRACE, max(padded // page, 1), page)
        if dynamic and marks is not None:
            # tt-metal (0.81.1): the top-down buffer must clear the DRAM the capture allocated
            # or freed and every live trace's mark
            trace.dram_high_water_mark = max(marks)
            live = max((t.dram_high_water_mark for t in mesh_device.traces.values()), default=0)
            if not _checks_live_traces():
                live = 0  # before 0.76.0 (PR #50503) ttnn let it land on a live trace's memory
            address = trace.buffer.desc.address
            if address < max(trace.dram_high_water_mark, live):
                trace.buffer.release()
                raise errors.trace_buffer_overlaps(address, marks[0], marks[1], live)
        trace.size = padded
        mesh_device.trace_buffers_size = total
        mesh_device.traces[trace.trace_id] = trace
        mesh_device.allocations_unsafe = True  # tt-metal: mark_allocations_unsafe()


def _checks_live_traces() -> bool:
    """Whether the emulated release refuses a dynamic trace buffer below a live trace's mark:
    0.81.1 does; `TTRECORD_EMULATOR_RELEASE=0.75.0` emulates a release that did not (tt-metal
    #48869), for recordings of what those releases let through."""
    import os

    from ttrecord import ttnn_versions

    emulated = os.environ.get("TTRECORD_EMULATOR_RELEASE") or ttnn_versions.REFERENCE
    forms = ttnn_versions.for_release(ttnn_versions.DYNAMIC_TRACE_REGION_OVERLAP, emulated) or ()
    return any("another live trace" in form for form in forms)


def execute_trace(
    mesh_device: Any, trace_id: int, *, cq_id: Optional[int] = None, blocking: bool = True
) -> None:
    """Replay a captured trace on `cq_id`. It is one command of that queue: in the default
    (eager) queue mode it runs before this returns whether or not `blocking` is set; in the
    adversarial and random modes (queues.py) it runs when the queue gets to it, and
    `blocking=True` makes the host wait for it, as on hardware."""
    trace = mesh_device.traces.get(int(trace_id))
    if trace is None:
        raise errors.trace_not_found(trace_id, mesh_device.mesh_id, sub_devices.active_id(mesh_device))
    if trace.manager != sub_devices.active_id(mesh_device):
        raise sub_devices.trace_not_in_active(trace_id, mesh_device, replay=True)
    faults.on_replay()

    def replay() -> None:
        program_cache.replayed(mesh_device)  # when the queue runs it
        for record in trace.records:
            run_record(mesh_device, record)

    with mesh_device.lock:
        queues = queues_of(mesh_device)
        cq = _cq(cq_id)
        queues.submit(cq, replay)
        if blocking:
            queues.host_wait(queues.record(cq))


def release_trace(mesh_device: Any, trace_id: int) -> None:
    """Free a trace's command buffer; allocations are safe again once none is left."""
    with mesh_device.lock:
        queues_of(mesh_device).finish()  # a pending replay of it runs first
        trace = mesh_device.traces.get(int(trace_id))
        if trace is None or trace.manager != sub_devices.active_id(mesh_device):
            return  # ttnn looks it up in the active sub-device manager only
        drop_trace(mesh_device, trace_id)


def drop_trace(mesh_device: Any, trace_id: int) -> None:
    """Free a trace's buffer and forget it (a release, or its sub-device manager removed)."""
    with mesh_device.lock:
        trace = mesh_device.traces.pop(int(trace_id), None)
        if trace is None:
            return
        mesh_device.unsafe_tracked.pop(int(trace_id), None)
        if trace.buffer is not None:
            trace.buffer.release()
        mesh_device.trace_buffers_size -= trace.size
        if not mesh_device.traces:
            mesh_device.allocations_unsafe = False


def is_trace_capture_active(device: Any) -> bool:
    return bool(device.capturing)


def record_op(
    device: Any,
    name: str,
    fn: Callable[..., Any],
    inputs: list,
    outputs: list,
    chips: Optional[tuple[int, ...]] = None,
    collective: bool = False,
    program: Any = None,
) -> None:
    """Append an op to the capture in progress on `device`, if there is one."""
    trace = device.active_capture()
    if trace is not None:
        trace.records.append(
            OpRecord(
                name,
                fn,
                tuple((t._buffer.desc, t._spec) for t in inputs),
                tuple((t._buffer.desc, t._spec) for t in outputs),
                chips,
                collective,
                program,
            )
        )
