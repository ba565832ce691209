"""Rule: every exported trace is structurally sound Chrome trace-event JSON.

Required fields per event type, a named process and thread for every track, slices on one
track properly nested (no partial overlap) and in time order, counters never negative.
"""

import json

from export_helpers import check_trace
from ttrecord.events import Status
from ttrecord.export import perfetto
from ttrecord.store.reader import Session
from ttrecord.testing import SessionBuilder


def test_sample_session_exports_a_sound_trace(sample_session, tmp_path):
    # GIVEN a recorded decode loop with a capture, a replay and a finding
    # WHEN it is exported to a file and read back as JSON
    out = tmp_path / "trace.json"
    with Session.open(sample_session) as s:
        summary = perfetto.export(s, out)
    trace = json.loads(out.read_text())
    # THEN the JSON passes every structural check and holds every kind of event
    assert check_trace(trace) == []
    assert {e["ph"] for e in trace["traceEvents"]} == {"M", "X", "i", "C"}
    assert summary.counts["slices"] == sum(e["ph"] == "X" for e in trace["traceEvents"])


def test_the_checker_rejects_partial_overlap_and_missing_fields():
    # GIVEN traces with a partially overlapping slice and an instant without a scope
    named = [
        {"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "p"}},
        {"ph": "M", "name": "thread_name", "pid": 1, "tid": 1, "args": {"name": "t"}},
    ]
    overlap = named + [
        {"ph": "X", "name": "a", "cat": "c", "ts": 0, "dur": 10, "pid": 1, "tid": 1, "args": {}},
        {"ph": "X", "name": "b", "cat": "c", "ts": 5, "dur": 10, "pid": 1, "tid": 1, "args": {}},
    ]
    no_scope = named + [{"ph": "i", "name": "x", "ts": 0, "pid": 1, "tid": 1}]
    negative = named + [{"ph": "C", "name": "n", "ts": 0, "pid": 1, "args": {"DRAM": -1}}]
    # WHEN checked THEN each is reported
    assert any("partially overlaps" in p for p in check_trace({"traceEvents": overlap}))
    assert check_trace({"traceEvents": no_scope})
    assert check_trace({"traceEvents": negative})


def test_overlapping_threads_and_unfinished_calls_still_nest(tmp_path):
    # GIVEN calls whose recorded times would partially overlap on one queue (two Python
    # threads, a nested call outliving its parent) and a call that never returned
    b = SessionBuilder()
    b.open_device()
    x = b.alloc(1048704)
    parent = b.op("ttnn.linear", [x], [x], line=3)
    child = b.op("ttnn.matmul", [x], [x], line=3, parent=parent.seq)
    other = b.op("ttnn.add", [x], [x], line=4, thread=2)
    died = b.op("ttnn.softmax", [x], [x], line=5)
    parent.t_ns, parent.dur_ns = 10_000, 5_000
    child.t_ns, child.dur_ns = 12_000, 6_000  # ends after its parent
    other.t_ns, other.dur_ns = 14_000, 4_000  # starts inside the parent, ends after it
    died.t_ns, died.dur_ns, died.status = 20_000, None, Status.DIED
    path = b.write(tmp_path / "s.db")
    # WHEN exported
    with Session.open(path) as s:
        trace = perfetto.build(s)
    # THEN the trace is sound, the clipped slices say so, and the dead call reaches the end
    assert check_trace(trace) == []
    by_name = {e["name"]: e for e in trace["traceEvents"] if e["ph"] == "X"}
    assert by_name["ttnn.matmul"]["args"]["clipped_from_ns"] == 6_000
    linear, matmul = by_name["ttnn.linear"], by_name["ttnn.matmul"]
    assert matmul["ts"] + matmul["dur"] == linear["ts"] + linear["dur"]
    assert by_name["ttnn.softmax"]["args"]["unfinished"] is True
    assert by_name["ttnn.softmax"]["args"]["status"] == "died"


def test_the_streamed_file_has_the_bytes_of_the_whole_document(tmp_path):
    # GIVEN a session with text that needs escaping (quotes, newlines, non-ASCII), calls that
    # nest, overlap and never return, buffers, a capture and a replay
    b = SessionBuilder(file='/models/dé"cœur\n.py')
    b.open_device()
    x = b.alloc(1048704)
    parent = b.op("ttnn.linear", [x], [x], line=3, args={"note": "ünïcode \"q\"", "v": 0.1})
    child = b.op("ttnn.matmul", [x], [x], line=3, parent=parent.seq)
    child.t_ns, child.dur_ns = parent.t_ns + 100, parent.dur_ns + 5_000
    tid = b.begin_trace(line=4)
    b.op("ttnn.add", [x], [x], line=5)
    b.end_trace(tid, line=6)
    b.execute(tid, line=7)
    died = b.op("ttnn.softmax", [x], [x], line=8)
    died.dur_ns, died.status = None, Status.DIED
    path = b.write(tmp_path / "s.db")
    # WHEN exported to a file
    with Session.open(path) as s:
        perfetto.export(s, tmp_path / "t.json")
        whole = perfetto.build(s)
    # THEN the file is what json.dump of the whole document writes
    text = (tmp_path / "t.json").read_text()
    assert text == json.dumps(whole, separators=(",", ":"), default=str)
    assert "\\u00e9" in text and "clipped_from_ns" in text and '"unfinished":true' in text
