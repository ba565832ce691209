"""The recorder's state objects on their own: traces per device, the program-cache count,
event numbers, open devices, and the per-call record builders."""

from __future__ import annotations

from types import SimpleNamespace

from ttrecord.events import Kind
from ttrecord.recorder.call_records import buffer_point, cache_miss_note, raised_end, returned_end
from ttrecord.recorder.devices import Devices
from ttrecord.recorder.program_cache import EntryCount
from ttrecord.recorder.queues import EventNumbers
from ttrecord.recorder.records import decode
from ttrecord.recorder.traces import Traces, trace_id


def test_a_call_while_its_device_captures_is_in_that_capture():
    traces = Traces()
    traces.begin(0, 7)
    assert traces.phase(Kind.OP, 0, (), {}) == ("capture", 7, 0)
    assert traces.phase(Kind.OP, None, (), {}) == ("capture", 7, 0)  # no device: the capture's
    assert traces.phase(Kind.OP, 1, (), {}) == ("eager", None, 1)  # another device: eager
    traces.end(0)
    assert traces.phase(Kind.OP, 0, (), {}) == ("eager", None, 0)
    assert traces.live == {0: {7}}  # ended, not released: still live


def test_replay_and_release_take_the_trace_from_the_arguments():
    traces = Traces()
    assert traces.phase(Kind.TRACE_EXECUTE, 0, ("dev", 3), {}) == ("replay", 3, 0)
    assert traces.phase(Kind.TRACE_RELEASE, 0, ("dev",), {"trace_id": "4"}) == ("eager", 4, 0)
    assert trace_id(object()) is None


def test_release_and_device_close_end_the_live_traces():
    traces = Traces()
    traces.begin(0, 1)
    traces.end(0)
    traces.begin(0, 2)
    traces.end(0)
    traces.begin(1, 5)
    traces.release(0, 1)
    assert traces.live == {0: {2}, 1: {5}}
    traces.release(0, 2)
    assert 0 not in traces.live
    traces.close_device(1)
    assert traces.live == {}
    assert traces.between_calls() == ("capture", 1, 5)  # device 1's capture never ended
    traces.end(1)
    assert traces.between_calls() == ("eager", None, None)


def test_cache_count_reports_growth_since_the_last_look_and_rebases_after_a_clear():
    dev = SimpleNamespace(entries=0)
    dev.num_program_cache_entries = lambda: dev.entries
    count = EntryCount(SimpleNamespace(objects=[dev]))
    assert count.grew() == 0  # the first look is the baseline
    dev.entries = 3
    assert count.grew() == 3
    dev.entries = 0  # the cache was cleared
    count.rebase()
    dev.entries = 1
    assert count.grew() == 1  # the compile after the clear counts


def test_cache_count_stops_asking_a_backend_without_it():
    asked = []
    dev = SimpleNamespace(num_program_cache_entries=lambda: asked.append(1) or 1 / 0)
    count = EntryCount(SimpleNamespace(objects=[dev]))
    assert count.grew() == 0 and count.grew() == 0
    assert len(asked) == 1


class _Event:
    def __init__(self, n: int) -> None:
        self.n = n

    def __repr__(self) -> str:
        return f"MeshEvent(id=0, device_id={self.n})"


def test_event_numbers_are_per_recording_and_renewed_when_recorded():
    a, b = EventNumbers(), EventNumbers()
    ev = _Event(1)
    assert a.key(ev, recorded=True) == "1 MeshEvent(id=0, device_id=1)"
    assert a.key(ev) == "1 MeshEvent(id=0, device_id=1)"  # waited for: the same serial
    assert a.key(ev, recorded=True).startswith("2 ")  # recorded again: a new serial
    assert b.key(ev).startswith("1 ")  # another recording counts on its own
    assert a.key(object()) is None and a.key(None) is None


def test_devices_keep_ids_by_object_and_forget_closed_ones():
    class Dev:
        def __init__(self, n: int) -> None:
            self.n = n

        def id(self) -> int:
            return self.n

    devices = Devices(SimpleNamespace())
    d0, d1 = Dev(0), Dev(1)
    devices.add(d0)
    devices.add(d1)
    assert [devices.id_of(d) for d in (d0, d1, None)] == [0, 1, None]
    assert Dev in devices.types and devices.objects == [d0, d1]
    devices.remove(d0)
    assert devices.objects == [d1]
    assert devices.num_banks(5, "DRAM") == 8  # unknown device: the default bank count


def test_builders_make_the_declared_records():
    end = decode(raised_end(4, 10, ValueError("bad"), 0, None))
    assert (end.tag, end.seq, end.status, end.error, end.outputs) == ("E", 4, "raised", "ValueError: bad", ())
    ok = decode(returned_end(4, 11, ((1,),), 0, 2, {"x": 1}))
    assert (ok.status, ok.error, ok.outputs, ok.trace, ok.extra) == ("ok", None, ((1,),), 2, {"x": 1})
    note = decode(cache_miss_note(9, 4, 12, 77, "eager", 0, None, "r", 2))
    assert (note.kind, note.name, note.parent, note.args, note.region) == (
        "note", "program_cache_miss", 4, {"new_entries": 2}, "r")
    assert type(note.name) is str  # marshal writes exact str only
    buf = (1, "DRAM", 4096, 2048)
    point = decode(buffer_point(10, None, 13, 77, "free", "capture", 3, None, buf, None))
    assert (point.kind, point.name, point.device, point.trace, point.buffer) == ("free", "free", 1, 3, buf)
