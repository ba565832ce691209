"""The emulator's command queues (emulator/queues.py): every mode respects the program's
happens-before edges, the adversarial mode delays everything else, a seed fixes the random
order, and a bad TTRECORD_EMULATOR_QUEUES value is one clear error."""

from __future__ import annotations

import pytest
import torch

from ttrecord import emulator as ttnn
from ttrecord.emulator.queues import CommandQueues, parse_mode


def _open(monkeypatch, mode: str):
    monkeypatch.setenv("TTRECORD_EMULATOR_QUEUES", mode)
    return ttnn.open_device(device_id=0, trace_region_size=800768, num_command_queues=2)


def _tile(value: float, device=None):
    return ttnn.from_torch(torch.full((32, 32), value), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)


@pytest.mark.parametrize("text, want", [(None, ("eager", None)), ("", ("eager", None)), ("adversarial", ("adversarial", None)),
                                        ("random", ("random", 0)), ("Random:42", ("random", 42))])  # fmt: skip
def test_modes_parse(text, want):
    assert parse_mode(text) == want


@pytest.mark.parametrize("text", ["lazy", "eager:3", "random:x"])
def test_a_bad_mode_is_one_line_naming_the_variable(text, monkeypatch):
    monkeypatch.setenv("TTRECORD_EMULATOR_QUEUES", text)
    with pytest.raises(ValueError) as err:
        ttnn.open_device(device_id=0)
    assert str(err.value).startswith("TTRECORD_EMULATOR_QUEUES=") and "\n" not in str(err.value)


def test_an_unordered_write_on_cq1_is_invisible_to_cq0_until_an_event_orders_it(monkeypatch):
    dev = _open(monkeypatch, "adversarial")
    try:
        x = _tile(1.0, dev)
        ttnn.copy_host_to_device_tensor(_tile(5.0), x, cq_id=1)
        assert ttnn.to_torch(x)[0, 0].item() == 1.0  # a blocking read on CQ 0: CQ 1 has not run
        ttnn.wait_for_event(0, ttnn.record_event(dev, 1))
        assert ttnn.to_torch(x)[0, 0].item() == 5.0  # CQ 0 now waits for the write
    finally:
        ttnn.close_device(dev)


def test_the_host_sees_a_write_after_event_synchronize_or_synchronize_device(monkeypatch):
    dev = _open(monkeypatch, "adversarial")
    try:
        x = _tile(1.0, dev)
        ttnn.copy_host_to_device_tensor(_tile(5.0), x, cq_id=1)
        ttnn.event_synchronize(ttnn.record_event(dev, 1))
        assert ttnn.to_torch(x)[0, 0].item() == 5.0
        ttnn.copy_host_to_device_tensor(_tile(7.0), x, cq_id=1)
        ttnn.synchronize_device(dev, cq_id=0)  # the other queue: not enough
        assert ttnn.to_torch(x)[0, 0].item() == 5.0
        ttnn.synchronize_device(dev)
        assert ttnn.to_torch(x)[0, 0].item() == 7.0
    finally:
        ttnn.close_device(dev)


def test_a_nonblocking_execute_runs_when_the_host_reads_its_queue(monkeypatch):
    dev = _open(monkeypatch, "adversarial")
    try:
        x, w = _tile(1.0, dev), _tile(2.0, dev)
        out = ttnn.add(x, w)
        tid = ttnn.begin_trace_capture(dev, cq_id=0)
        out = ttnn.add(x, w)
        ttnn.end_trace_capture(dev, tid, cq_id=0)
        ttnn.copy_host_to_device_tensor(_tile(10.0), x)  # CQ 0, before the replay
        ttnn.execute_trace(dev, tid, cq_id=0, blocking=False)
        early = out.cpu(blocking=False)
        assert ttnn.to_torch(early)[0, 0].item() == 0.0  # the read has not run
        assert ttnn.to_torch(out)[0, 0].item() == 12.0  # blocking: CQ 0 ran the write and the replay
        assert ttnn.to_torch(early)[0, 0].item() == 12.0  # ... and the earlier read after them
        ttnn.release_trace(dev, tid)
    finally:
        ttnn.close_device(dev)


def test_eager_mode_runs_every_command_at_once(monkeypatch):
    dev = _open(monkeypatch, "eager")
    try:
        x = _tile(1.0, dev)
        ttnn.copy_host_to_device_tensor(_tile(5.0), x, cq_id=1)
        assert ttnn.to_torch(x)[0, 0].item() == 5.0
        assert ttnn.to_torch(x.cpu(blocking=False, cq_id=1))[0, 0].item() == 5.0
    finally:
        ttnn.close_device(dev)


def _order(seed: int) -> list[tuple[int, int]]:
    queues = CommandQueues(2, f"random:{seed}")
    ran: list[tuple[int, int]] = []
    for i in range(30):
        q = i % 2
        queues.submit(q, lambda q=q, i=i: ran.append((q, i)))
    queues.finish()
    return ran


def test_a_seed_fixes_the_random_interleaving_and_each_queue_stays_in_order():
    assert _order(3) == _order(3)
    assert any(_order(s) != _order(3) for s in (4, 5, 6))
    for q in (0, 1):
        mine = [i for qq, i in _order(3) if qq == q]
        assert mine == sorted(mine)


def test_a_wait_runs_the_other_queue_up_to_the_event_only():
    queues = CommandQueues(2, "adversarial")
    ran: list[str] = []
    queues.submit(1, lambda: ran.append("w1"))
    event = queues.record(1)
    queues.submit(1, lambda: ran.append("w2"))
    queues.wait(0, event)
    queues.submit(0, lambda: ran.append("op"))
    assert ran == []
    queues.finish(0)
    assert ran == ["w1", "op"]  # w2 came after the event
