"""A capture's ops as the diff loads them (flat rows) equal the ops read as full Events."""

import subprocess
import sys
from pathlib import Path

from ttrecord.analysis.drift import load_capture
from ttrecord.events import BufferRef, TensorRef
from ttrecord.store.reader import EventFilter, Session
from ttrecord.testing import TILE_BYTES, SessionBuilder, host_tensor
import pytest

pytestmark = pytest.mark.spawns

SAMPLE = Path(__file__).parents[2] / "samples" / "address_drift.py"


def _from_events(session: Session, prep: bool) -> list[tuple]:
    """Capture 1's (or its prep run's) top-level ops through `Session.events`, as comparable
    tuples: seq, name, call site, and every input and output field the diff compares."""
    trace = session.traces()[0]
    first, last = (0, trace.begin_seq) if prep else (trace.begin_seq, trace.end_seq)
    filt = EventFilter(phases=frozenset({"prep" if prep else "capture"}),
                       kinds=frozenset({"op"}), device=trace.device, top_level=True)  # fmt: skip
    out = []
    for ev in session.events(filt, limit=1_000_000, with_tensors=True):
        if not first < ev.seq < last:
            continue
        site = ev.callsite
        out.append((ev.seq, ev.name, site.file if site else "?", site.line if site else 0,
                    site.function if site else "?", tuple(map(_fields, ev.inputs)),
                    tuple(map(_fields, ev.outputs))))  # fmt: skip
    return out


def _fields(t: TensorRef) -> tuple:
    b = t.buffer
    where = (b.buffer_type, b.address, b.size, b.device) if b else (None,) * 4
    return (t.storage, t.shape, t.dtype, t.layout, t.memory_config, *where)


def _as_loaded(session: Session, prep: bool) -> list[tuple]:
    return [
        (op.seq, op.name, op.file, op.line, op.function,
         *(tuple((*t[:1], t.shape, *t[2:]) for t in side) for side in (op.inputs, op.outputs)))
        for op in load_capture(session, 1, prep=prep).ops
    ]  # fmt: skip


def _step(b: SessionBuilder, bufs: list[BufferRef]) -> None:
    """Ops whose tensors stress the flat path: 12 inputs (positions sort as numbers, not
    text), a host input, several outputs, no tensors at all, a nested op, no call site."""
    b.op("ttnn.add", [bufs[15], bufs[16]], [bufs[18]], line=None)  # not part of the prep run
    wide = b.op("ttnn.concat", bufs[:12], [bufs[12]], line=10)
    b.op("ttnn.matmul", [bufs[0]], [bufs[13]], line=11, parent=wide.seq)  # nested: not listed
    b.op("ttnn.from_torch", [], [bufs[14]], line=12).inputs = (host_tensor((1, 64)),)
    b.op("ttnn.split", [bufs[12]], [bufs[15], bufs[16], bufs[17]], line=13)
    b.op("ttnn.synchronize", [], [], line=14)


def test_flat_capture_rows_match_full_events(tmp_path):
    """GIVEN a prep run and a capture of ops with many, host, multiple and no tensors
    WHEN both are loaded for a diff THEN every op, call site and tensor field equals what
    the full Event path reads."""
    b = SessionBuilder(file="/models/step.py")
    b.open_device()
    bufs = [BufferRef(0, "L1" if i % 3 else "DRAM", 1 << 20 | i * TILE_BYTES, TILE_BYTES)
            for i in range(20)]  # fmt: skip
    _step(b, bufs)
    trace = b.begin_trace(line=20)
    _step(b, bufs[1:] + bufs[:1])
    b.end_trace(trace, line=21)
    with Session.open(b.write(tmp_path / "s.db")) as s:
        for prep in (False, True):
            loaded = _as_loaded(s, prep)
            assert loaded and loaded == _from_events(s, prep)
        ops = load_capture(s, 1).ops
        assert [len(op.inputs) for op in ops] == [2, 12, 1, 1, 0]
        assert ops[0].file == "?" and ops[2].inputs[0].storage == "host"
        assert [len(op.outputs) for op in ops] == [1, 1, 1, 3, 0]


def test_flat_capture_rows_match_full_events_on_a_recorded_sample(tmp_path):
    """GIVEN samples/address_drift.py recorded on the emulator WHEN its captures are loaded
    THEN the ops equal those read as full Events (real recorder output: nested calls, uploads)."""
    path = tmp_path / "s.db"
    command = [sys.executable, "-m", "ttrecord", "run", "--backend", "emulator", "-o", str(path)]
    subprocess.run([*command, str(SAMPLE)], check=True, capture_output=True, timeout=120)
    with Session.open(path) as s:
        for prep in (False, True):
            loaded = _as_loaded(s, prep)
            assert loaded and loaded == _from_events(s, prep)
