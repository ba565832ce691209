"""Allocations and frees come from the allocator's snapshots and sit at the right place in the
event order: a buffer freed by garbage collection between two calls comes before the next
call; buffers a call allocates are its children; around a trace, "allocated after
end_trace_capture" and "freed before execute_trace" are exactly what happened."""

from __future__ import annotations

import pytest

from tests.recorder.inprocess import record_inprocess

from ttrecord import emulator

pytestmark = pytest.mark.slow


def _by_kind(events, kind):
    return [e for e in events if e.kind.value == kind]


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_alloc_free_order_around_calls_and_trace(tmp_path):
    """GIVEN a program that drops a tensor between calls, captures a trace, allocates after
    the capture and frees a tensor before replaying WHEN recorded THEN each ALLOC/FREE has
    the emulator's address and bank-local size and sits where it happened."""
    facts = {}

    def body(ttnn):
        import torch

        dev = ttnn.open_device(device_id=0, trace_region_size=1 << 20)

        def tensor():
            return ttnn.from_torch(torch.ones(64, 64), dtype=ttnn.bfloat16,
                                   layout=ttnn.TILE_LAYOUT, device=dev)  # fmt: skip

        x = tensor()
        doomed = tensor()
        facts["doomed"] = doomed.buffer_address()
        del doomed  # freed by refcount, no ttnn call sees it
        y = ttnn.relu(x)  # prep
        tid = ttnn.begin_trace_capture(dev, cq_id=0)
        y = ttnn.relu(x)  # noqa: F841 - holds the output as a model does
        ttnn.end_trace_capture(dev, tid, cq_id=0)
        late = tensor()  # allocated after capture, live across the replay
        facts["late"] = late.buffer_address()
        temp = tensor()
        facts["temp"] = temp.buffer_address()
        del temp  # freed before the replay
        ttnn.execute_trace(dev, tid, cq_id=0, blocking=True)
        facts["late_alive"] = late.buffer_address()
        ttnn.release_trace(dev, tid)
        ttnn.close_device(dev)

    events = record_inprocess(emulator, body, tmp_path)
    calls = [e for e in events if e.parent is None and e.kind.value not in ("alloc", "free")]
    relus = [e.seq for e in calls if e.name == "relu"]
    end = next(e.seq for e in calls if e.name == "end_trace_capture")
    execute = next(e.seq for e in calls if e.name == "execute_trace")

    allocs = {e.buffer.address: e for e in _by_kind(events, "alloc") if e.buffer.buffer_type == "DRAM"}
    frees = {e.buffer.address: e for e in _by_kind(events, "free")}
    # 64x64 bf16 TILE = 4 pages of 2048 bytes over 8 DRAM banks: 2048 bytes per bank
    assert {a.buffer.size for a in allocs.values()} == {2048}
    # every ALLOC is the child of the call that allocated it
    parents = {e.parent for e in _by_kind(events, "alloc")}
    assert None not in parents and parents <= {e.seq for e in calls}
    # the garbage-collected tensor's free comes right before the first relu, outside any call
    doomed_free = next(e for e in _by_kind(events, "free") if e.buffer.address == facts["doomed"] and e.seq < relus[0])
    assert doomed_free.parent is None and doomed_free.seq == relus[0] - 1
    # the late tensor is allocated after end_trace_capture and freed only at close
    late_alloc = [e for e in _by_kind(events, "alloc") if e.buffer.address == facts["late"] and e.seq > end]
    assert late_alloc and late_alloc[0].seq < execute
    assert not [e for e in _by_kind(events, "free") if e.buffer.address == facts["late"] and end < e.seq < execute]
    # the temporary one is freed between its allocation and the replay, outside any call
    temp_free = [e for e in _by_kind(events, "free") if e.buffer.address == facts["temp"] and end < e.seq < execute]
    assert len(temp_free) == 1 and temp_free[0].parent is None
    assert allocs and frees


def test_deallocate_frees_inside_the_call(tmp_path):
    """GIVEN ttnn.deallocate(t) WHEN recorded THEN the FREE of t's buffer is a child of that
    deallocate call."""

    def body(ttnn):
        import torch

        dev = ttnn.open_device(device_id=0)
        t = ttnn.from_torch(torch.ones(32, 32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=dev)
        ttnn.deallocate(t)
        ttnn.close_device(dev)

    events = record_inprocess(emulator, body, tmp_path)
    dealloc = next(e for e in events if e.name == "deallocate")
    frees = [e for e in events if e.kind.value == "free"]
    assert frees[0].parent == dealloc.seq
    assert frees[0].buffer.address == dealloc.inputs[0].buffer.address


def test_scratch_buffers_of_captured_ops_are_recorded(tmp_path):
    """GIVEN ttnn.sum (which allocates a scratch buffer and frees it inside the call) inside a
    trace capture WHEN recorded THEN that scratch appears as an ALLOC and a FREE child of the
    call, marked temporary, at an address no surviving buffer holds; eager calls are not
    graph-captured."""

    def body(ttnn):
        import torch

        dev = ttnn.open_device(device_id=0, trace_region_size=1 << 20)
        x = ttnn.from_torch(torch.ones(64, 64), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=dev)
        ttnn.sum(x, dim=-1)
        tid = ttnn.begin_trace_capture(dev, cq_id=0)
        ttnn.sum(x, dim=-1)
        ttnn.end_trace_capture(dev, tid, cq_id=0)
        ttnn.release_trace(dev, tid)
        ttnn.close_device(dev)

    events = record_inprocess(emulator, body, tmp_path)
    sums = [e for e in events if e.name == "sum"]
    temps = [e for e in events if (e.args or {}).get("temporary")]
    assert [(e.kind.value, e.parent) for e in temps] == [("alloc", sums[1].seq), ("free", sums[1].seq)]
    assert temps[0].buffer == temps[1].buffer and temps[0].phase.value == "capture"
    out = sums[1].outputs[0].buffer
    assert not out.overlaps(temps[0].buffer)


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_snapshot_per_call_fallback_records_the_same_buffers(tmp_path, monkeypatch):
    """GIVEN an interpreter where Tensor deaths cannot be watched (the recorder then diffs the
    allocator's full view around every call) WHEN the program of the first test is recorded
    THEN it yields the same ALLOC/FREE events, at the same places, as the ledger does."""
    from ttrecord.recorder import lifetimes

    def body(ttnn):
        import torch

        dev = ttnn.open_device(device_id=0, trace_region_size=1 << 20)

        def tensor():
            return ttnn.from_torch(torch.ones(64, 64), dtype=ttnn.bfloat16,
                                   layout=ttnn.TILE_LAYOUT, device=dev)  # fmt: skip

        x = tensor()
        doomed = tensor()
        del doomed
        y = ttnn.relu(x)
        tid = ttnn.begin_trace_capture(dev, cq_id=0)
        y = ttnn.relu(x)  # noqa: F841
        ttnn.end_trace_capture(dev, tid, cq_id=0)
        late = tensor()  # noqa: F841
        temp = tensor()
        del temp
        ttnn.execute_trace(dev, tid, cq_id=0, blocking=True)
        ttnn.release_trace(dev, tid)
        ttnn.close_device(dev)

    def shape(events):
        return [(e.seq, e.kind.value, e.parent, e.phase.value, e.buffer.address, e.buffer.size)
                for e in events if e.kind.value in ("alloc", "free")]  # fmt: skip

    (tmp_path / "ledger").mkdir()
    (tmp_path / "fallback").mkdir()
    ledger = shape(record_inprocess(emulator, body, tmp_path / "ledger"))
    monkeypatch.setattr(lifetimes, "watch", lambda cls, watcher: False)
    fallback = shape(record_inprocess(emulator, body, tmp_path / "fallback"))
    assert len(ledger) >= 6
    assert ledger == fallback
