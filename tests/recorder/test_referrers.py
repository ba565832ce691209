"""At `execute_trace`, buffers allocated after that trace's capture and still alive are noted
with the Python references that hold them (frames' locals, containers, attributes), readable
through `ttrecord.store.referrer_rows`; nothing is noted (nor scanned) when there is none."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from ttrecord import emulator
from ttrecord.events import Kind
from ttrecord.recorder.referrers import Referrers
from ttrecord.store.reader import Session
from ttrecord.store.referrer_rows import referrers
from ttrecord.testing import SessionBuilder
from tests.recorder.inprocess import record_inprocess


def _tensor(ttnn, device, value):
    return ttnn.from_torch(torch.full((32, 32), value), dtype=ttnn.bfloat16,
                           layout=ttnn.TILE_LAYOUT, device=device)  # fmt: skip


class Cache:
    def __init__(self):
        self.slots = []


def _body(ttnn):
    device = ttnn.open_device(device_id=0, trace_region_size=800768)
    x = _tensor(ttnn, device, 1.0)
    ttnn.relu(x)
    tid = ttnn.begin_trace_capture(device, cq_id=0)
    ttnn.relu(x)
    ttnn.end_trace_capture(device, tid, cq_id=0)
    ttnn.execute_trace(device, tid, cq_id=0)  # nothing allocated since the capture: no note
    cache = Cache()
    cache.slots.append({"k": _tensor(ttnn, device, 2.0)})  # held through an attribute
    scratch = _tensor(ttnn, device, 3.0)
    ttnn.execute_trace(device, tid, cq_id=0)  # both alive: noted with their holders
    del scratch, cache
    ttnn.execute_trace(device, tid, cq_id=0)  # both gone: no note
    ttnn.release_trace(device, tid)
    ttnn.close_device(device)


def test_live_post_capture_buffers_are_named_by_their_holders(tmp_path):
    events = record_inprocess(emulator, _body, tmp_path)
    executes = [e for e in events if e.kind is Kind.TRACE_EXECUTE]
    notes = [e for e in events if e.kind is Kind.NOTE and e.name == "referrers"]
    assert [n.parent for n in notes] == [executes[1].seq]
    held = sorted(tuple(b["held_by"]) for b in notes[0].args["buffers"])
    assert held == [("_body: cache.slots[0]['k']",), ("_body: scratch",)]
    # each holder with the line its frame was running: _body's second execute_trace
    line = next(i for i, text in enumerate(Path(__file__).read_text().splitlines(), 1) if "both alive: noted" in text)
    assert [b["at"] for b in notes[0].args["buffers"]] == [[f"{__file__}:{line}"]] * 2
    allocs = {(e.buffer.buffer_type, e.buffer.address) for e in events if e.kind is Kind.ALLOC}
    assert {(b["buffer_type"], b["address"]) for b in notes[0].args["buffers"]} <= allocs


def test_the_store_reads_the_notes_by_execute_trace(tmp_path):
    b = SessionBuilder()
    b.open_device(line=1)
    tid = b.begin_trace(line=2)
    b.end_trace(tid, line=3)
    ex = b.execute(tid, line=4)
    b.note("referrers", None, {"buffers": [
        {"buffer_type": "DRAM", "address": 4096, "held_by": ["main: bias", "main: keep[0]"]}]},
        parent=ex.seq)  # fmt: skip
    b.note("referrers", None, {"buffers": "damaged"}, parent=ex.seq)  # data, not an error
    b.release(tid, line=5)
    with Session.open(b.write(tmp_path / "s.db")) as s:
        assert referrers(s) == {ex.seq: {("DRAM", 4096): ["main: bias", "main: keep[0]"]}}


class _Ledger:
    """A ledger whose entries must not be read: the unchanged-generation path is free."""

    generation = 7

    @property
    def entries(self):
        raise AssertionError("scanned the live buffers although nothing changed")


class _Recorder:
    allocations = _Ledger()


def test_no_scan_when_nothing_was_allocated_or_freed_since_the_capture():
    r = Referrers(_Recorder())
    r._at_end[(1, 0)] = (7, frozenset())
    assert r.on_execute(1, 0) is None
    assert r.on_execute(1, 5) is None  # a trace it never saw end


class _ChurnLedger:
    """Entries in allocation order; the generation moved since the capture (a scratch tensor
    was allocated and freed), but nothing allocated since is live: the tensors must not be
    walked."""

    def __init__(self):
        self.generation = 1
        self.entries = {(1, "DRAM", 64): [(1, "DRAM", 64), 2048, 1, 1, True]}

    @property
    def _owner(self):
        raise AssertionError("walked the live tensors although nothing allocated since is live")


class _ChurnRecorder:
    def __init__(self):
        self.allocations = _ChurnLedger()


def test_a_loop_that_frees_what_it_allocates_between_replays_walks_nothing():
    recorder = _ChurnRecorder()
    r = Referrers(recorder)
    r.on_end(1, 0)
    ledger = recorder.allocations
    scratch = [(1, "DRAM", 4096), 2048, 2, 1, True]
    ledger.entries[scratch[0]] = scratch  # allocated after the capture ...
    del ledger.entries[scratch[0]]  # ... and freed before the replay
    ledger.generation = 3
    assert r.on_execute(1, 0) is None
    assert r._at_end[(1, 0)][0] == 3  # the next replay compares one counter again
    # one allocated since and still live: now the holders are looked for
    ledger.entries[(1, "DRAM", 8192)] = [(1, "DRAM", 8192), 2048, 3, 1, True]
    ledger.generation = 4
    with pytest.raises(AssertionError, match="walked the live tensors"):
        r.on_execute(1, 0)
