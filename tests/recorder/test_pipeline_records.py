"""Rule: the supervisor's C pipeline stores any log as the pure-Python path does (LogReader,
Decoder, SessionWriter.add): the same rows for every record shape the writer treats apart,
the same frames listed as unreadable in a damaged log, the same refusal of a record it cannot
decode, and the same calls closed at the end."""

from __future__ import annotations

import json
import marshal
import os
import sqlite3
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from tests.recorder.event_tables import first_difference
from ttrecord.events import SessionStatus, Status
from ttrecord.recorder.decode import Decoder
from ttrecord.recorder.log import LogReader, LogWriter
from ttrecord.recorder.pipeline import NativePipeline
from ttrecord.recorder.records import (
    new_begin, new_end, new_exit, new_header, new_point, new_site,
)
from ttrecord.store import native
from ttrecord.store.writer import SessionWriter

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def module():
    found, name, why = native.choose()
    if found is None:
        pytest.skip(f"the C pipeline is not available here: {why}")
    return found


def _buf(address: int, size: int = 2048, page: int | None = 2048, pages: int | None = 1) -> tuple:
    return (0, "DRAM", address, size, page, pages)


def _tensor(tid: int | None, address: int | None, shape: tuple = (1, 32, 32),
            memory_config: str = "DRAM interleaved") -> tuple:  # fmt: skip
    buf = None if address is None else _buf(address)
    return (tid, "device" if buf else "host", shape, "BFLOAT16", "TILE", memory_config, buf)


def _begin(seq: int, name: str = "add", kind: str = "op", phase: str = "eager", **kw) -> tuple:
    fields = dict(seq=seq, parent=None, t_ns=seq * 10, thread=7, kind=kind, name=name,
                  phase=phase, device=0, cq=0, trace=None, site_id=1, args=None, inputs=(),
                  region=None)  # fmt: skip
    fields.update(kw)
    return new_begin(**fields)


def _end(seq: int, **kw) -> tuple:
    fields = dict(seq=seq, t_ns=seq * 10 + 5, status="ok", error=None, outputs=(), device=None,
                  trace=None, extra=None)  # fmt: skip
    fields.update(kw)
    return new_end(**fields)


def _point(seq: int, kind: str, buffer: tuple | None, **kw) -> tuple:
    fields = dict(seq=seq, parent=None, t_ns=seq * 10, thread=7, kind=kind, name=kind,
                  phase="eager", device=0, trace=None, site_id=None, args=None, region=None,
                  buffer=buffer)  # fmt: skip
    fields.update(kw)
    return new_point(**fields)


def _records() -> list[tuple]:
    """Every branch of the writer: call sites (two equal ones), buffers confirmed, begun by a
    tensor, reallocated with another size, freed unknown; traces and devices; arguments
    merged with what a call learnt; text that is not UTF-8; an unknown kind; a nested call; a
    call that never ends."""
    stack = (("model.py", 3, "main"),)
    return [
        new_header(backend="emulator", backend_reason="test", ttnn_version=None, pid=1),
        new_site(site_id=1, file="model.py", line=10, function="step", stack=stack),
        new_site(site_id=2, file="model.py", line=10, function="step", stack=stack),
        new_site(site_id=3, file="caf\udce9.py", line=1, function="f\udcff", stack=()),
        _begin(1, "open_device", "device_open", args={"device_id": 0}),
        _end(1, device=0, extra={"arch": "blackhole", "num_dram_banks": 8, "num_l1_banks": 140,
                                  "trace_region_size": 1 << 20, "info": {"cores": [13, 10]}}),
        _point(2, "alloc", _buf(4096)[:4]),
        _begin(3, inputs=(_tensor(5, 4096), _tensor(6, 8192), _tensor(None, None, (2, True))),
               args={"alpha": 0.5, "neg": -3, "flag": False, "s": "x\"y\u00e9", "none": None}),
        _point(4, "alloc", _buf(12288)[:4], parent=3),
        _end(3, outputs=(_tensor(7, 12288),)),
        _point(5, "alloc", (0, "DRAM", 4096, 4096)),  # another size: the first buffer ended
        _point(6, "free", _buf(8192)[:4]),
        _point(7, "free", _buf(99999)[:4]),  # nothing live there
        _begin(8, "begin_trace_capture", "trace_begin", trace=1),
        _end(8),
        _begin(9, "relu", phase="capture", trace=1, site_id=2, inputs=(_tensor(7, 12288),)),
        _begin(10, "relu_inner", phase="capture", trace=1, parent=9),
        _end(10),
        _end(9, outputs=(_tensor(8, 16384, memory_config="L1 height sharded on (0,0)-(1,0)"),)),
        _begin(11, "end_trace_capture", "trace_end", trace=1),
        _end(11),
        _begin(12, "execute_trace", "trace_execute", phase="replay", trace=1),
        _end(12),
        _begin(13, "execute_trace", "trace_execute", phase="replay", trace=1),
        _end(13, status="raised", error="TT_FATAL caf\udce9"),
        _point(14, "some_new_kind", None, name="n\udce9", region="r\udce9"),
        _point(15, "note", None, args={"k": [1, 2]}, site_id=3),
        _begin(16, "release_trace", "trace_release", trace=1),
        _end(16),
        _point(17, "free", _buf(12288)[:4]),
        _begin(18, "close_device", "device_close"),
        _end(18),
        _begin(19, "to_torch", "d2h", inputs=(_tensor(8, 16384),), region="warm"),
        _end(19),
        _begin(20, "matmul"),  # never ends
        _begin(21, "inner", parent=20),
        _point(22, "alloc", _buf(20480)[:4], parent=21),
        new_exit(exit_code=0),
    ]


def _write_log(path: Path, records: list[tuple]) -> None:
    writer = LogWriter(str(path))
    for i in range(0, len(records), 5):  # frames of one record and of several
        writer.write_many(records[i : i + 5])
    writer.close()


def _python(log: Path, db: Path) -> tuple[LogReader, Decoder, int | None]:
    reader, decoder = LogReader(str(log)), Decoder()
    writer = SessionWriter(db)
    writer.start(script="m.py", argv=["m.py"], backend="emulator")
    while True:
        decoder.feed(reader.read(256))
        writer.add(decoder.ready())
        if not reader.more:
            break
    last = decoder.close_open_calls(Status.DIED)
    writer.add(decoder.ready())
    writer.finish(SessionStatus.CRASHED)
    writer.close()
    return reader, decoder, last


def _c(module, log: Path, db: Path) -> tuple[LogReader, NativePipeline, int | None]:
    reader = LogReader(str(log))
    writer = SessionWriter(db)
    pipeline = NativePipeline(module, db)
    writer.start(script="m.py", argv=["m.py"], backend="emulator")
    while True:
        pipeline.read(reader)
        pipeline.write_ready()
        if not reader.more:
            break
    last = pipeline.close_open_calls(Status.DIED)
    pipeline.write_ready()
    pipeline.close()
    writer.finish(SessionStatus.CRASHED)
    writer.close()
    return reader, pipeline, last


def test_every_record_shape_is_stored_alike(module, tmp_path: Path) -> None:
    """GIVEN a log with every shape of record the writer treats apart, read in small chunks
    WHEN stored through both paths THEN the tables, the released count, the program's end and
    the call the run ended in are the same."""
    log = tmp_path / "log"
    _write_log(log, _records())
    r1, d1, last1 = _python(log, tmp_path / "py.db")
    r2, d2, last2 = _c(module, log, tmp_path / "c.db")
    assert first_difference(tmp_path / "py.db", tmp_path / "c.db") is None
    assert (last1, d1.released) == (last2, d2.released) == (20, 22)
    assert d1.end == d2.end and d2.end.exit_code == 0
    conn = sqlite3.connect(tmp_path / "c.db")
    try:  # the branches were taken: not two empty sessions
        assert conn.execute("SELECT count(*) FROM callsites").fetchone() == (2,)
        assert conn.execute("SELECT ops, executions, release_seq FROM traces").fetchall() == [(1, 2, 16)]
        assert conn.execute("SELECT close_seq, info FROM devices").fetchall() == [(18, '{"cores":[13,10]}')]
        assert conn.execute("SELECT count(*) FROM buffers WHERE free_seq IS NOT NULL").fetchone() == (3,)
        assert conn.execute("SELECT status FROM events WHERE seq = 21").fetchone() == ("died",)
    finally:
        conn.close()


def _frame(record: object) -> bytes:
    data = marshal.dumps(record)
    return struct.pack("<I", len(data)) + data


def _damaged_log(path: Path) -> None:
    """Good frames, a frame whose contents do not unmarshal, good frames again, then a length
    past the committed end (nothing after it can be read)."""
    good = _records()[:8]
    body = b"".join(_frame(r) for r in good[:4])
    body += struct.pack("<I", 5) + b"\xff\x00\x01\x02\x03"
    body += b"".join(_frame(r) for r in good[4:])
    body += struct.pack("<I", 1 << 20) + b"\x00" * 8
    end = 16 + len(body)
    path.write_bytes(struct.pack("<Q", end) + b"TTRLOG01" + body)


def test_a_damaged_log_lists_the_same_unreadable_frames(module, tmp_path: Path) -> None:
    """GIVEN a log with an undecodable frame and a damaged length WHEN stored through both
    paths THEN both list the same unreadable frames, stop at the same place and store the same
    rows from the readable ones."""
    log = tmp_path / "log"
    _damaged_log(log)
    r1, _, _ = _python(log, tmp_path / "py.db")
    r2, _, _ = _c(module, log, tmp_path / "c.db")
    assert r1.unreadable == r2.unreadable and len(r2.unreadable) == 2
    assert r1.broken and r2.broken
    assert first_difference(tmp_path / "py.db", tmp_path / "c.db") is None
    conn = sqlite3.connect(tmp_path / "c.db")
    try:
        assert conn.execute("SELECT count(*) FROM events").fetchone()[0] > 0
    finally:
        conn.close()


@pytest.mark.parametrize("bad", [
    ("P", 1, None),  # a point with too few fields
    ("B", 1, None, 0),  # a begin with too few fields
    ("Q", 1),  # an unknown tag
    _point(1, "alloc", None, phase="sideways"),  # an unknown phase
])  # fmt: skip
def test_a_record_that_does_not_decode_is_refused_by_both(module, tmp_path: Path, bad) -> None:
    """GIVEN a frame holding a record of the wrong shape WHEN read by either path THEN the
    decoding raises (the supervisor stops recording and keeps the log)."""
    log = tmp_path / "log"
    _write_log(log, [bad])
    with pytest.raises((TypeError, ValueError, KeyError, IndexError)):
        Decoder().feed(LogReader(str(log)).read())
    writer = SessionWriter(tmp_path / "c.db")
    pipeline = NativePipeline(module, tmp_path / "c.db")
    try:
        with pytest.raises((TypeError, ValueError, KeyError, IndexError)):
            pipeline.read(LogReader(str(log)))
    finally:
        pipeline.close()
        writer.close()


@pytest.mark.spawns
def test_without_a_compiler_the_python_path_records_and_says_why(tmp_path: Path) -> None:
    """GIVEN no C compiler and an empty build cache WHEN a sample is recorded THEN the session
    is complete, on the Python pipeline, and names the reason."""
    env = {**os.environ, "CC": "no-such-compiler-here", "XDG_CACHE_HOME": str(tmp_path / "cache"),
           "PYTHONPATH": str(ROOT)}  # fmt: skip
    out = tmp_path / "s.db"
    done = subprocess.run([sys.executable, "-m", "ttrecord", "run", "-q", "-o", str(out),
                           str(ROOT / "samples" / "clean_decode.py")], env=env,
                          capture_output=True, text=True, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    conn = sqlite3.connect(out)
    try:
        options = json.loads(conn.execute("SELECT options FROM session").fetchone()[0])
        status, events = conn.execute("SELECT status, (SELECT count(*) FROM events)"
                                      " FROM session").fetchone()  # fmt: skip
    finally:
        conn.close()
    assert options["pipeline"] == native.PYTHON
    assert "compiler" in options["pipeline_reason"]
    assert status == "ok" and events > 0
