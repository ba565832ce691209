"""The two-queue samples under every emulator queue mode (TTRECORD_EMULATOR_QUEUES): the
ordered executor and every fixed race sample compute the eager numbers in every mode; each
race sample computes wrong numbers under `adversarial`, for the reason its finding names.

Samples run in this process with `runpy` (the mode is read when a device is opened), and the
fixed variants are the sample's own text with the one-line fix applied.
"""

from __future__ import annotations

import runpy
from pathlib import Path

import pytest

SAMPLES = Path(__file__).resolve().parents[2] / "samples"
MODES = ["eager", "adversarial", "random:1", "random:7"]


def run_sample(path: Path, mode: str, monkeypatch, capsys) -> str:
    monkeypatch.setenv("TTRECORD_EMULATOR_QUEUES", mode)
    runpy.run_path(str(path), run_name="__main__")
    return capsys.readouterr().out


def fixed(tmp_path: Path, name: str, old: str, new: str) -> Path:
    text = (SAMPLES / name).read_text()
    assert text.count(old) == 1, f"{name}: the line to fix is not there exactly once"
    out = tmp_path / name
    out.write_text(text.replace(old, new))
    return out


def missing_wait_fixed(tmp_path: Path) -> Path:
    return fixed(tmp_path, "two_cq_missing_wait.py", "        ttnn.record_event(device, WRITE)  # recorded, but CQ 0 never waits for it\n",
                 "        ttnn.wait_for_event(OPS, ttnn.record_event(device, WRITE))\n")


def read_event_fixed(tmp_path: Path) -> Path:
    old = ("        read_event = ttnn.record_event(device, IO)  # expect: TR012\n"
           "        pending.append(out.cpu(blocking=False, cq_id=IO))  # the read the event was meant to cover\n")
    new = ("        pending.append(out.cpu(blocking=False, cq_id=IO))\n"
           "        read_event = ttnn.record_event(device, IO)\n")
    return fixed(tmp_path, "pipelined_io_read_event.py", old, new)


def sync_fixed(tmp_path: Path) -> Path:
    old = ("    early = ttnn.to_torch(host_out)[0, 0].item()  # expect: TR012\n"
           "    ttnn.synchronize_device(device)\n")
    new = ("    ttnn.synchronize_device(device)\n"
           "    early = ttnn.to_torch(host_out)[0, 0].item()\n")
    return fixed(tmp_path, "nonblocking_read_before_sync.py", old, new)


@pytest.mark.parametrize("mode", MODES)
def test_the_ordered_two_queue_executor_equals_eager_in_every_mode(mode, monkeypatch, capsys):
    out = run_sample(SAMPLES / "two_cq_overlapped_input.py", mode, monkeypatch, capsys)
    assert "replayed outputs equal eager: True" in out


@pytest.mark.parametrize("sample", ["two_cq_missing_wait.py", "pipelined_io_read_event.py"])
def test_a_race_gives_the_eager_numbers_in_the_default_mode(sample, monkeypatch, capsys):
    # GIVEN the default queue mode (every command runs when enqueued) THEN the race is hidden
    out = run_sample(SAMPLES / sample, "eager", monkeypatch, capsys)
    assert "replayed outputs equal eager: True" in out


@pytest.mark.parametrize("sample", ["two_cq_missing_wait.py", "pipelined_io_read_event.py"])
def test_a_race_gives_wrong_numbers_in_adversarial_mode(sample, monkeypatch, capsys):
    out = run_sample(SAMPLES / sample, "adversarial", monkeypatch, capsys)
    assert "replayed outputs equal eager: False" in out


@pytest.mark.parametrize("make", [missing_wait_fixed, read_event_fixed])
@pytest.mark.parametrize("mode", MODES)
def test_a_fixed_race_sample_equals_eager_in_every_mode(make, mode, tmp_path, monkeypatch, capsys):
    out = run_sample(make(tmp_path), mode, monkeypatch, capsys)
    assert "replayed outputs equal eager: True" in out


def _reads(out: str) -> tuple[float, float]:
    lines = dict(line.split(":", 1) for line in out.splitlines() if line.startswith("read "))
    return float(lines["read before synchronize"]), float(lines["read after synchronize"])


def test_an_early_host_read_sees_zeros_in_adversarial_mode_and_the_value_after_the_sync(monkeypatch, capsys):
    early, late = _reads(run_sample(SAMPLES / "nonblocking_read_before_sync.py", "adversarial", monkeypatch, capsys))
    assert (early, late) == (0.0, 8.0)  # 3 + 5: the read had not run; after the sync it had


@pytest.mark.parametrize("mode", MODES)
def test_a_host_read_after_the_sync_is_right_in_every_mode(mode, tmp_path, monkeypatch, capsys):
    early, late = _reads(run_sample(sync_fixed(tmp_path), mode, monkeypatch, capsys))
    assert (early, late) == (8.0, 8.0)


def test_the_missing_wait_makes_every_replay_read_the_first_input(monkeypatch, capsys):
    # WHY the numbers are wrong: CQ 0 never waits for CQ 1, so under the adversarial order no
    # write on CQ 1 has run when CQ 0 replays; each replay computes on the input written
    # before the capture (host_inputs[0]): all four outputs are the first one.
    import torch

    from ttrecord import emulator as ttnn

    seen = []
    real = ttnn.to_torch

    def spy(t, *a, **k):
        value = real(t, *a, **k)
        seen.append(value)
        return value

    monkeypatch.setattr(ttnn, "to_torch", spy)
    run_sample(SAMPLES / "two_cq_missing_wait.py", "adversarial", monkeypatch, capsys)
    replayed = seen[-4:]
    assert all(torch.equal(r, replayed[0]) for r in replayed)
    assert torch.equal(replayed[0], seen[1])  # the eager output of host_inputs[0] (seen[0] is its host copy)
