"""Events written by the writer come back from the reader unchanged, with derived tables."""

import sqlite3

import pytest

from ttrecord.errors import SessionError
from ttrecord.events import Phase
from ttrecord.store.reader import EventFilter, Session
from ttrecord.testing import SessionBuilder


def _decode_loop(b: SessionBuilder):
    b.open_device()
    x = b.alloc(1048704)
    w = b.alloc(1050752)
    for _ in range(2):  # warm-up, then the prep run
        b.h2d(x, line=10)
        y = b.alloc(1052800)
        b.op("ttnn.matmul", [x, w], [y], line=11)
        b.free(y)
    tid = b.begin_trace(line=12)
    y = b.alloc(1052800)
    b.op("ttnn.matmul", [x, w], [y], line=11)
    b.end_trace(tid, line=13)
    b.execute(tid, line=14)
    b.d2h(y, line=15)
    b.release(tid, line=16)
    return tid


def test_events_round_trip_with_tensors_and_callsites(tmp_path):
    # GIVEN a recorded decode loop WHEN written and read back THEN every event keeps its fields
    b = SessionBuilder()
    _decode_loop(b)
    path = b.write(tmp_path / "s.db")
    with Session.open(path) as s:
        events = list(s.iter_events(batch=3))
        assert [e.seq for e in events] == [e.seq for e in b.events]
        matmuls = [e for e in events if e.name == "ttnn.matmul"]
        assert [e.callsite.line for e in matmuls] == [11, 11, 11]
        assert matmuls[-1].phase is Phase.CAPTURE and matmuls[-1].trace == 0
        assert [t.buffer.address for t in matmuls[0].inputs] == [1048704, 1050752]
        assert s.info().status == "ok"


def test_prep_run_is_tagged_only_for_the_last_iteration_before_capture(tmp_path):
    b = SessionBuilder()
    _decode_loop(b)
    with Session.open(b.write(tmp_path / "s.db")) as s:
        ops = s.events(EventFilter(kinds=frozenset({"op"})))
        assert [str(e.phase) for e in ops] == ["eager", "prep", "capture"]
        h2ds = s.events(EventFilter(kinds=frozenset({"h2d"})))
        assert [str(e.phase) for e in h2ds] == ["eager", "prep"]


def test_a_deallocate_between_warm_up_and_capture_does_not_hide_the_prep_run(tmp_path):
    # GIVEN the warm-up's output freed with ttnn.deallocate right before the capture
    b = SessionBuilder()
    b.open_device()
    x, w = b.alloc(1048704), b.alloc(1050752)
    y = b.alloc(1052800)
    b.op("ttnn.matmul", [x, w], [y], line=11)
    b.free(y, parent=b.op("ttnn.deallocate", [y], [], line=12).seq)
    tid = b.begin_trace(line=13)
    b.op("ttnn.matmul", [x, w], [b.alloc(1052800)], line=11)
    b.end_trace(tid, line=14)
    with Session.open(b.write(tmp_path / "s.db")) as s:
        ops = s.events(EventFilter(kinds=frozenset({"op"})))
        # THEN the warm-up is still its prep run (it stopped at the deallocate before)
        assert [(e.name, str(e.phase)) for e in ops] == [
            ("ttnn.matmul", "prep"), ("ttnn.deallocate", "prep"), ("ttnn.matmul", "capture")]


def test_buffers_pair_alloc_and_free_and_traces_count_ops(tmp_path):
    b = SessionBuilder()
    _decode_loop(b)
    with Session.open(b.write(tmp_path / "s.db")) as s:
        bufs = s.buffers()
        assert [(r.buffer.address, r.free_seq is None) for r in bufs] == [
            (1048704, True), (1050752, True), (1052800, False), (1052800, False), (1052800, True)
        ]
        (trace,) = s.traces()
        assert (trace.ops, trace.executions) == (1, 1)
        assert trace.release_seq is not None


def test_filters_and_keyset_paging(tmp_path):
    b = SessionBuilder()
    _decode_loop(b)
    with Session.open(b.write(tmp_path / "s.db")) as s:
        f = EventFilter(phases=frozenset({"capture"}))
        assert {e.phase for e in s.events(f)} == {Phase.CAPTURE}
        page1 = s.events(limit=4)
        page2 = s.events(limit=4, after_seq=page1[-1].seq)
        assert page2[0].seq == page1[-1].seq + 1
        assert s.event_count(EventFilter(text="matmul")) == 3
        assert s.event_index(page2[0].seq) == 4


@pytest.mark.parametrize(
    "content, message",
    [
        (b"hello", "not an SQLite file"),
        (None, "no such file"),
    ],
)
def test_unusable_files_give_one_line_errors(tmp_path, content, message):
    path = tmp_path / "x.db"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(SessionError, match=message) as info:
        Session.open(path)
    assert "\n" not in str(info.value)


def test_foreign_newer_and_truncated_sessions_are_refused(tmp_path):
    foreign = tmp_path / "foreign.db"
    sqlite3.connect(foreign).execute("CREATE TABLE t (x)").connection.commit()
    with pytest.raises(SessionError, match="not a ttrecord session"):
        Session.open(foreign)

    b = SessionBuilder()
    _decode_loop(b)
    newer = b.write(tmp_path / "newer.db")
    conn = sqlite3.connect(newer)
    conn.execute("PRAGMA user_version = 99")
    conn.commit()
    conn.close()
    with pytest.raises(SessionError, match="newer ttrecord"):
        Session.open(newer)

    good = SessionBuilder()
    _decode_loop(good)
    data = (tmp_path / "full.db")
    good.write(data)
    truncated = tmp_path / "trunc.db"
    truncated.write_bytes(data.read_bytes()[:3000])
    with pytest.raises(SessionError, match="damaged or truncated"), Session.open(truncated) as s:
        s.events()
