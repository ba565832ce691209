"""Fault injection: TTRECORD_EMULATOR_FAULT makes the Nth execute_trace crash or hang."""

from __future__ import annotations

import pytest

from ttrecord.emulator import faults


def test_fault_specs_parse():
    assert faults.parse(None) is None
    assert faults.parse("segv@replay:2") == faults.Fault("segv", 2, faults.DEFAULT_HANG_SECONDS)
    assert faults.parse("hang@replay:3:0.5") == faults.Fault("hang", 3, 0.5)
    with pytest.raises(ValueError, match="TTRECORD_EMULATOR_FAULT"):
        faults.parse("boom@op:1")


def test_hang_sleeps_inside_the_nth_replay(monkeypatch, device, tile):
    """GIVEN hang@replay:N WHEN the Nth execute_trace runs THEN it sleeps for the given time."""
    import time

    from ttrecord import emulator as ttnn

    x = tile(device, 1.0)
    ttnn.relu(x)  # warm-up
    tid = ttnn.begin_trace_capture(device)
    ttnn.relu(x)
    ttnn.end_trace_capture(device, tid)
    ttnn.execute_trace(device, tid)
    upcoming = next(faults._replays)  # the count the next execute_trace would get, minus one
    monkeypatch.setenv(faults.ENV_VAR, f"hang@replay:{upcoming + 2}:0.3")
    ttnn.execute_trace(device, tid)  # upcoming + 1: no fault
    start = time.perf_counter()
    ttnn.execute_trace(device, tid)  # upcoming + 2: hangs 0.3 s
    assert time.perf_counter() - start >= 0.3


@pytest.mark.spawns
def test_segv_kills_the_process_with_signal_11(monkeypatch):
    """GIVEN segv@replay:N WHEN the Nth replay is counted THEN the process dies by SIGSEGV
    (checked in a forked child; the crash sample checks it end to end)."""
    import os
    import signal

    pid = os.fork()
    if pid == 0:  # child: count replays until the fault fires
        try:
            import faulthandler

            faulthandler.disable()  # pytest's would print a crash report for this deliberate crash
            upcoming = next(faults._replays)
            os.environ[faults.ENV_VAR] = f"segv@replay:{upcoming + 2}"
            faults.on_replay()
            faults.on_replay()
        finally:
            os._exit(0)  # only reached if no crash happened
    _, status = os.waitpid(pid, 0)
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGSEGV
