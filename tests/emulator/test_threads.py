"""Ops from several threads on one device keep the allocator and memory consistent."""

from __future__ import annotations

import threading

import torch

from ttrecord import emulator as ttnn


def test_two_threads_running_ops_get_their_own_correct_results(device):
    """GIVEN two threads each running 50 dependent ops WHEN they interleave THEN both results are exact
    and every intermediate was freed (only the two inputs per thread and the results stay live)."""
    results, errors = {}, []

    def work(name: str, value: float) -> None:
        try:
            x = ttnn.from_torch(torch.full((32, 32), value), dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT, device=device)
            one = ttnn.from_torch(torch.ones(32, 32), dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT, device=device)
            for _ in range(50):
                x = ttnn.add(x, one)
            results[name] = (x, one)
        except Exception as exc:  # surfaced by the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(f"t{i}", 100.0 * i)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert ttnn.to_torch(results["t0"][0])[0, 0].item() == 50.0
    assert ttnn.to_torch(results["t1"][0])[0, 0].item() == 150.0
    assert len(ttnn._ttnn.reports.get_buffers(device)) == 4 + 1  # and the add's kernel binary
