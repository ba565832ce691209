"""Rule: every log record is declared once (ttrecord/recorder/records.py); what the recorder
writes has exactly the declared fields and reads back, field by field, as what was written."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from ttrecord.recorder import records
from ttrecord.recorder.decode import Decoder
from ttrecord.recorder.log import LogReader, LogWriter
from ttrecord.store.liveness import log_path

from tests.recorder.conftest import run_ttrecord

pytestmark = pytest.mark.spawns

# Every kind of record the recorder writes, in one program: calls (begin, end), call sites,
# point events (buffers, a region, a program-cache miss, a replay verification), the header,
# an uncaught exception and the exit code.
PROGRAM = textwrap.dedent("""
    import torch
    import ttrecord
    import ttnn

    device = ttnn.open_device(device_id=0, trace_region_size=800768)
    w = ttnn.from_torch(torch.ones(32, 32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    x = ttnn.from_torch(torch.ones(32, 32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    with ttrecord.region("warm"):
        ttnn.add(x, w)
    big = ttnn.from_torch(torch.ones(64, 32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    ttnn.relu(ttnn.add(big, big))  # warm-up: compiled before the capture
    tid = ttnn.begin_trace_capture(device, cq_id=0)
    out = ttnn.relu(ttnn.add(big, big))
    ttnn.end_trace_capture(device, tid, cq_id=0)
    ttnn.execute_trace(device, tid, cq_id=0, blocking=True)
    ttnn.multiply(x, x)  # compiles while the trace is live
    raise ValueError("the end")
""")


def _values(cls: type) -> dict:
    """A distinct value per field (the tag excluded), each of a type marshal writes."""
    return {name: (i, f"{cls.__name__}.{name}") for i, name in enumerate(cls._fields[1:])}  # type: ignore[attr-defined]


@pytest.mark.parametrize("tag", sorted(records.RECORDS))
def test_each_declared_record_reads_back_field_by_field(tmp_path: Path, tag: str) -> None:
    cls = records.RECORDS[tag]
    new = records.BUILDERS[tag]
    values = _values(cls)
    path = tmp_path / "log"
    writer = LogWriter(str(path))
    writer.write(new(**values))
    writer.close()
    reader = LogReader(str(path))
    (raw,) = list(reader.read())
    reader.close()
    decoded = records.decode(raw)
    assert type(decoded) is cls
    assert decoded.tag == tag
    assert {name: getattr(decoded, name) for name in values} == values


def test_every_record_type_is_declared_with_its_builder() -> None:
    tags = {getattr(records.RecordType, k) for k in vars(records.RecordType) if k.isupper()}
    assert tags == set(records.RECORDS) == set(records.BUILDERS)
    public = {getattr(records, n) for n in dir(records) if n.startswith("new_")}
    assert public == set(records.BUILDERS.values())
    with pytest.raises(ValueError):  # a tag cannot be declared twice
        records.declare(records.RecordType.BEGIN, records.Begin)


def test_a_builder_refuses_a_missing_or_unknown_field() -> None:
    fields = _values(records.End)
    with pytest.raises(TypeError):
        records.new_end(**{k: v for k, v in fields.items() if k != "extra"})
    with pytest.raises(TypeError):
        records.new_end(**fields, status_code=1)
    with pytest.raises(TypeError):  # a record of another kind's length does not decode
        records.decode(records.new_end(**fields)[:-1])


def test_a_recording_writes_only_declared_records_and_decodes_them_to_their_fields(
        tmp_path: Path) -> None:  # fmt: skip
    script = tmp_path / "program.py"
    script.write_text(PROGRAM)
    out = tmp_path / "s.db"
    proc = run_ttrecord(["run", "--backend", "emulator", "--verify-replay", "--audit-region",
                         "nothing", "-o", str(out), str(script)], cwd=tmp_path,
                        env_extra={"TTRECORD_KEEP_LOG": "1"})  # fmt: skip
    assert proc.returncode == 1, proc.stderr[-2000:]  # the program's ValueError
    reader = LogReader(str(log_path(out)))
    raw = list(reader.read(1 << 30))
    reader.close()

    decoded = [records.decode(r) for r in raw]  # KeyError / TypeError on an undeclared shape
    assert all(len(r) == len(type(d)._fields) for r, d in zip(raw, decoded, strict=True))
    seen = {d.tag for d in decoded}
    assert seen == set(records.RECORDS) - {records.RecordType.STOPPED}, seen
    points = {d.name for d in decoded if d.tag == records.RecordType.POINT}
    assert {"alloc", "free", "warm", "program_cache_miss", "replay_verified"} <= points, points

    # The decoder turns them into events carrying the same fields.
    decoder = Decoder()
    decoder.feed(raw)
    events = {ev.seq: ev for ev in decoder.ready()}
    begins = {d.seq: d for d in decoded if d.tag == records.RecordType.BEGIN}
    ends = {d.seq: d for d in decoded if d.tag == records.RecordType.END}
    sites = {d.site_id: d for d in decoded if d.tag == records.RecordType.SITE}
    assert begins and set(begins) == set(ends)
    for seq, b in begins.items():
        ev, e = events[seq], ends[seq]
        assert (ev.name, ev.kind.value, ev.thread, ev.parent, ev.cq, ev.region) == (
            b.name, b.kind, b.thread, b.parent, b.cq, b.region)
        assert ev.dur_ns == e.t_ns - b.t_ns and ev.status.value == e.status and ev.error == e.error
        assert [t.tensor_id for t in ev.inputs] == [d[0] for d in b.inputs]
        descs = [records.TensorDesc._make(d) for d in e.outputs]
        assert [t.buffer.address if t.buffer else None for t in ev.outputs] == [
            records.BufferDesc._make(d.buffer).address if d.buffer else None for d in descs]
        if b.site_id is not None:
            site = ev.callsite
            assert site is not None
            assert (site.file, site.line) == (sites[b.site_id].file, sites[b.site_id].line)
    for p in (d for d in decoded if d.tag == records.RecordType.POINT):
        ev = events[p.seq]
        assert (ev.name, ev.kind.value, ev.parent, ev.trace, ev.region) == (
            p.name, p.kind, p.parent, p.trace, p.region)
        if p.buffer is not None:
            span = records.BufferSpan._make(p.buffer[:4])
            assert ev.buffer is not None
            assert (ev.buffer.device, ev.buffer.address, ev.buffer.size) == (
                span.device, span.address, span.size)
    assert decoder.end.exception.type == "ValueError"
    assert decoder.end.exception.message == "the end"
    assert decoder.end.exit_code == 1
    assert decoder.end.header.backend == "emulator"


def test_a_stopped_log_ends_with_the_declared_stopped_record(tmp_path: Path) -> None:
    path = tmp_path / "log"
    writer = LogWriter(str(path))
    writer.write(records.new_exit(exit_code=0))
    writer._stop("the disk is full")
    writer.close()
    reader = LogReader(str(path))
    raw = list(reader.read())
    reader.close()
    decoder = Decoder()
    decoder.feed(raw)
    assert records.decode(raw[-1]) == records.Stopped("T", "the disk is full")
    assert decoder.end.stopped == "the disk is full"
