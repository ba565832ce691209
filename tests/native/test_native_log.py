"""The native log format and its decoder, on logs written here byte by byte (no compiler).

What recorder.cpp writes (a 64-byte header, then 72-byte record heads with their frames and
text) must come back as the event log's records: calls paired, phases from the trace hooks,
a truncated last record ignored (a process killed mid-write), a raised begin not a capture.
"""

from __future__ import annotations

import struct
from pathlib import Path

from ttrecord.events import Kind, Phase, Status
from ttrecord.native.decode import NativeDecoder, short_function, short_message
from ttrecord.native.logformat import HEADER_SIZE, MAGIC, NativeLogReader, RecType
from ttrecord.native.roles import ROLE_INDEX
from ttrecord.recorder.decode import Decoder

_HEAD = struct.Struct("<IHHQQQIHH4Q")


def record(type_: RecType, role: str, seq: int, *, values=(0, 0, 0, 0), text: str = "",
           parent: int = 0, t_ns: int = 0) -> bytes:  # fmt: skip
    body = text.encode()
    size = (_HEAD.size + len(body) + 7) & ~7
    head = _HEAD.pack(size, int(type_), ROLE_INDEX[role] if role else 0, seq, parent, t_ns, 77, 0,
                      len(body), *values)  # fmt: skip
    return (head + body).ljust(size, b"\0")


def write_log(path: Path, records: list[bytes], *, audit: bool = False, extra: bytes = b"") -> None:
    data = b"".join(records)
    end = HEADER_SIZE + len(data)
    header = MAGIC + struct.pack("<QqQ", end, 4242, 1 if audit else 0)
    path.write_bytes(header.ljust(HEADER_SIZE, b"\0") + data + extra)


def decode(prefix: Path, audit: bool = False) -> list:
    native = NativeDecoder(str(prefix), python_program=False, audit=audit, missing=["WRITE_SHARD"])
    dec = Decoder()
    dec.feed(native.poll())
    dec.close_open_calls(Status.DIED)
    return dec.ready()


def test_calls_get_the_phase_of_the_capture_they_ran_in(tmp_path):
    """GIVEN a read, a capture with a read and a finish, and a read after it THEN the reads are
    eager, capture, eager; the capture's trace id comes from the begin's argument."""
    write_log(tmp_path / "S.native.4242", [
        record(RecType.BEGIN, "READ_SHARD", 1), record(RecType.END, "READ_SHARD", 1),
        record(RecType.BEGIN, "TRACE_BEGIN", 2, values=(0xD, 0, 5, 0)),
        record(RecType.END, "TRACE_BEGIN", 2),
        record(RecType.BEGIN, "READ_SHARD", 3),
        record(RecType.END, "READ_SHARD", 3, values=(1, 0, 0, 0),
               text="TT_FATAL @ x.cpp:1: c\ninfo:\nReads are not supported.\nbacktrace:\n --- f\n"),
        record(RecType.BEGIN, "FINISH", 4), record(RecType.END, "FINISH", 4),
        record(RecType.BEGIN, "TRACE_END", 5, values=(0xD, 0, 5, 0)),
        record(RecType.END, "TRACE_END", 5),
        record(RecType.BEGIN, "READ_SHARD", 6), record(RecType.END, "READ_SHARD", 6),
    ])  # fmt: skip
    events = decode(tmp_path / "S.native")
    reads = [e for e in events if e.kind is Kind.D2H]
    assert [e.phase for e in reads] == [Phase.EAGER, Phase.CAPTURE, Phase.EAGER]
    assert reads[1].trace == 5 and reads[1].status is Status.RAISED
    assert reads[1].error == "TT_FATAL @ x.cpp:1: c info: Reads are not supported."
    sync = next(e for e in events if e.kind is Kind.SYNC)
    assert sync.phase is Phase.CAPTURE
    warning = next(e for e in events if e.kind is Kind.WARNING)
    assert "host-to-device writes not recorded" in warning.args["message"]


def test_a_begin_that_raised_starts_no_capture(tmp_path):
    """GIVEN a trace begin that raised THEN the read after it is eager."""
    write_log(tmp_path / "S.native.1", [
        record(RecType.BEGIN, "TRACE_BEGIN", 1, values=(0xD, 0, 0, 0)),
        record(RecType.END, "TRACE_BEGIN", 1, values=(1, 0, 0, 0), text="TT_THROW: no room"),
        record(RecType.BEGIN, "READ_SHARD", 2), record(RecType.END, "READ_SHARD", 2),
    ])  # fmt: skip
    reads = [e for e in decode(tmp_path / "S.native") if e.kind is Kind.D2H]
    assert [e.phase for e in reads] == [Phase.EAGER]


def test_audit_capture_turns_begin_and_end_into_a_region(tmp_path):
    """GIVEN an audit log THEN begin/end are a region's bounds, the read inside is eager and in
    the region, and the replay of the never-captured trace is a note."""
    write_log(tmp_path / "S.native.1", [
        record(RecType.BEGIN, "TRACE_BEGIN", 1, values=(0xD, 0, 0, 1)),
        record(RecType.END, "TRACE_BEGIN", 1),
        record(RecType.BEGIN, "READ_SHARD", 2), record(RecType.END, "READ_SHARD", 2),
        record(RecType.BEGIN, "TRACE_END", 3, values=(0xD, 0, 0, 1)),
        record(RecType.END, "TRACE_END", 3),
        record(RecType.BEGIN, "TRACE_REPLAY", 4, values=(0xD, 0, 0, 1)),
        record(RecType.END, "TRACE_REPLAY", 4),
    ], audit=True)  # fmt: skip
    events = decode(tmp_path / "S.native", audit=True)
    kinds = [e.kind for e in events if e.kind is not Kind.WARNING]
    assert kinds == [Kind.REGION_BEGIN, Kind.D2H, Kind.REGION_END, Kind.NOTE], kinds
    read = next(e for e in events if e.kind is Kind.D2H)
    assert read.phase is Phase.EAGER and read.region == "capture@?"
    assert not any(e.kind in (Kind.TRACE_BEGIN, Kind.TRACE_EXECUTE) for e in events)


def test_a_truncated_last_record_and_an_open_call_are_what_a_killed_process_leaves(tmp_path):
    """GIVEN a log whose last call began but never ended, followed by bytes past the committed
    end THEN the call is open (it died) and the stray bytes are never read."""
    write_log(tmp_path / "S.native.1", [record(RecType.BEGIN, "READ_SHARD", 1)],
              extra=b"\x99" * 40)  # fmt: skip
    reader = NativeLogReader(str(tmp_path / "S.native.1"))
    assert [r.type for r in reader.read()] == [RecType.BEGIN]
    assert reader.pid == 4242 and not reader.audit
    events = [e for e in decode(tmp_path / "S.native") if e.kind is Kind.D2H]
    assert len(events) == 1 and events[0].status is Status.DIED


def test_names_and_messages_are_shortened_for_findings():
    """Rule: an event is named Class::method; a TT_FATAL keeps its condition and info only."""
    assert short_function("tt::tt_metal::distributed::MeshCommandQueueBase::"
                          "enqueue_read_mesh_buffer(void*, std::shared_ptr<X> const&, bool)") \
        == "MeshCommandQueueBase::enqueue_read_mesh_buffer"
    assert short_function("std::vector<float> ttnn::Tensor::to_vector<float>(int) const") \
        == "Tensor::to_vector"
    assert short_function("(anonymous namespace)::read_logits(Model&)") == "read_logits"
    assert short_message("TT_FATAL @ a.cpp:9: x\ninfo:\nNo.\nbacktrace:\n --- 0x1\n") \
        == "TT_FATAL @ a.cpp:9: x info: No."
