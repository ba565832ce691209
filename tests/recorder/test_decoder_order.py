"""Rule: the decoder releases complete events in seq order, each once, never past a call that
is still running, whatever order its records arrive in; and a batch's events share the
TensorRefs and BufferRefs of equal descriptions (the writer keys its caches on them)."""

from __future__ import annotations

from ttrecord.events import Kind, Status
from ttrecord.recorder import records
from ttrecord.recorder.decode import Decoder

_DESC = (7, "device", (1, 32), "BFLOAT16", "TILE", "DRAM interleaved", (0, "DRAM", 4096, 2048, 2048, 1))


def _begin(seq: int, parent: int | None = None) -> tuple:
    return records.new_begin(seq=seq, parent=parent, t_ns=seq * 10, thread=1, kind="op",
                             name="add", phase="eager", device=0, cq=None, trace=None,
                             site_id=None, args={"0": seq}, inputs=(_DESC,), region=None)  # fmt: skip


def _end(seq: int) -> tuple:
    return records.new_end(seq=seq, t_ns=seq * 10 + 5, status="ok", error=None, outputs=(_DESC,),
                           device=None, trace=None, extra=None)  # fmt: skip


def _point(seq: int, parent: int | None, kind: str = "alloc") -> tuple:
    return records.new_point(seq=seq, parent=parent, t_ns=seq * 10, thread=1, kind=kind,
                             name=kind, phase="eager", device=0, trace=None, site_id=None,
                             args=None, region=None, buffer=(0, "DRAM", 4096, 2048))  # fmt: skip


def test_events_come_out_in_seq_order_up_to_the_oldest_running_call() -> None:
    decoder = Decoder()
    # call 1 with children 2 and 3; call 4 begins and is still running; point 5 inside it
    decoder.feed([_begin(1), _point(2, 1), _point(3, 1, "free"), _begin(4), _end(1),
                  _point(5, 4)])  # fmt: skip
    first = decoder.ready()
    assert [ev.seq for ev in first] == [1, 2, 3]
    assert decoder.ready() == []  # nothing new below the running call 4
    decoder.feed([_point(6, None), _end(4)])
    second = decoder.ready()
    assert [ev.seq for ev in second] == [4, 5, 6]
    assert decoder.released == 6
    call = first[0]
    assert (call.kind, call.status, call.dur_ns, call.args) == (Kind.OP, Status.OK, 5, {"0": 1})
    assert call.inputs[0].buffer is not None and call.inputs[0].buffer.address == 4096
    # equal descriptions decode to the very same (frozen) objects
    assert second[0].inputs[0] is call.inputs[0] and call.outputs[0] is call.inputs[0]
    assert first[1].buffer is first[2].buffer is not None


def test_a_call_that_never_ended_is_released_with_the_status_given() -> None:
    decoder = Decoder()
    decoder.feed([_begin(1), _point(2, 1), _begin(3, parent=1)])
    assert decoder.ready() == []
    assert decoder.close_open_calls(Status.DIED) == 1
    events = decoder.ready()
    assert [(ev.seq, ev.status) for ev in events] == [(1, Status.DIED), (2, Status.OK),
                                                      (3, Status.DIED)]  # fmt: skip
    assert events[0].dur_ns is None and events[0].outputs == ()


def test_each_call_gets_its_own_args_dict() -> None:
    decoder = Decoder()
    decoder.feed([_begin(1), _end(1), _begin(2), _end(2)])
    a, b = decoder.ready()
    assert a.args is not None
    a.args["x"] = 1  # a reader of one event must not change another's
    assert b.args == {"0": 2}
