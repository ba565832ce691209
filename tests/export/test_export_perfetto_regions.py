"""Rule: trace captures and replays are slices enclosing the calls they contain."""

from export_helpers import encloses, slices
from ttrecord.export import perfetto
from ttrecord.store.reader import Session


def test_capture_and_replay_enclose_their_calls(sample_session):
    # GIVEN the sample decode loop WHEN exported
    with Session.open(sample_session) as s:
        trace = perfetto.build(s)
    capture = slices(trace, name="capture trace 0")
    replay = slices(trace, name="replay trace 0")
    assert len(capture) == 1 and len(replay) == 1
    # THEN the capture slice holds begin, the captured op, the readback and end, and nothing else
    inside = [e["name"] for e in slices(trace) if e is not capture[0] and encloses(capture[0], e)]
    assert inside == ["begin_trace_capture", "ttnn.matmul", "to_torch", "end_trace_capture"]
    assert all(e["args"]["phase"] == "capture" for e in slices(trace, cat="op,capture"))
    assert capture[0]["args"]["ops"] == 1 and capture[0]["args"]["executions"] == 1
    # AND the replay slice holds the execute_trace call
    (execute,) = slices(trace, name="execute_trace")
    assert encloses(replay[0], execute)
    assert not encloses(capture[0], execute)


def test_op_slices_carry_their_arguments_and_tensors(sample_session):
    # GIVEN the sample session WHEN exported
    with Session.open(sample_session) as s:
        trace = perfetto.build(s)
    captured = slices(trace, cat="op,capture")[0]
    # THEN an op's args name its call site, scalar arguments and tensors with their addresses
    args = captured["args"]
    assert args["callsite"].endswith("model.py:9 (main)")
    assert args["args"] == {"transpose_a": False}
    assert args["inputs"][0].startswith("DRAM@0x100080 2048B/bank 32x32 BFLOAT16 TILE")
    assert args["outputs"][0].startswith("DRAM@0x101880")
    assert args["trace"] == 0
    readback = slices(trace, name="to_torch")[0]
    assert readback["args"]["status"] == "raised"
    assert "Reads are not supported during trace capture" in readback["args"]["error"]
