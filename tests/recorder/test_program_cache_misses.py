"""The recorder notes program-cache growth (a compile) under the call that caused it, only while
a trace is being captured or is live; the emulator keys its program cache like ttnn."""

from __future__ import annotations

import torch

from ttrecord import emulator
from ttrecord.events import Kind, Phase
from tests.recorder.inprocess import record_inprocess
import pytest

pytestmark = pytest.mark.slow


def _body(ttnn):
    device = ttnn.open_device(device_id=0, trace_region_size=800768)
    x = ttnn.from_torch(torch.ones(32, 32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    ttnn.relu(x)  # eager compile: no trace yet, not noted
    ttnn.relu(x)  # same key: a cache hit
    tid = ttnn.begin_trace_capture(device, cq_id=0)
    ttnn.relu(x)  # warmed up: no compile
    try:
        ttnn.gelu(x)  # compiles inside the capture: ttnn refuses ("Cannot load new binaries")
    except RuntimeError:
        pass
    ttnn.end_trace_capture(device, tid, cq_id=0)
    y = ttnn.from_torch(torch.ones(64, 32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    ttnn.relu(y)  # a new shape after capture, trace live: compiles
    ttnn.release_trace(device, tid)
    ttnn.exp(x)  # no trace live: not noted
    assert device.num_program_cache_entries() == 4
    ttnn.close_device(device)


def test_misses_are_noted_under_their_call_only_while_a_trace_lives(tmp_path):
    events = record_inprocess(emulator, _body, tmp_path)
    by_seq = {e.seq: e for e in events}
    misses = [e for e in events if e.kind is Kind.NOTE and e.name == "program_cache_miss"]
    noted = [(by_seq[e.parent].name, e.phase) for e in misses]
    assert noted == [("gelu", Phase.CAPTURE), ("relu", Phase.EAGER)]
    assert all(e.args == {"new_entries": 1} for e in misses)


def test_emulator_cache_key_includes_shape_dtype_layout_and_memory_config():
    device = emulator.open_device(device_id=0)
    try:
        def make(shape, dtype=emulator.bfloat16, layout=emulator.TILE_LAYOUT, mem=None):
            return emulator.from_torch(torch.ones(*shape), dtype=dtype, layout=layout, device=device,
                                       memory_config=mem)  # fmt: skip

        a = make((32, 32))
        emulator.relu(a)
        emulator.relu(make((32, 32)))
        assert device.num_program_cache_entries() == 1
        emulator.relu(make((64, 32)))
        emulator.relu(make((32, 32), dtype=emulator.float32))
        emulator.relu(make((32, 32), layout=emulator.ROW_MAJOR_LAYOUT))
        emulator.relu(make((32, 32), mem=emulator.L1_MEMORY_CONFIG))
        assert device.num_program_cache_entries() == 5
        emulator.relu(a, memory_config=emulator.DRAM_MEMORY_CONFIG)  # the default: same key
        assert device.num_program_cache_entries() == 5
        device.disable_and_clear_program_cache()
        assert device.num_program_cache_entries() == 0
    finally:
        emulator.close_device(device)


def _clear_body(ttnn):
    device = ttnn.open_device(device_id=0, trace_region_size=800768)
    x = ttnn.from_torch(torch.ones(32, 32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    ttnn.relu(x)
    ttnn.gelu(x)
    ttnn.exp(x)  # three entries
    tid = ttnn.begin_trace_capture(device, cq_id=0)
    ttnn.relu(x)
    ttnn.end_trace_capture(device, tid, cq_id=0)
    device.disable_and_clear_program_cache()  # trace live: the count drops from 3 to 0
    device.enable_program_cache()
    ttnn.relu(x)  # compiles again (1 entry, fewer than before the clear): still noted
    ttnn.release_trace(device, tid)
    ttnn.close_device(device)


def test_a_compile_after_a_cache_clear_is_noted_and_the_clear_is_an_event(tmp_path):
    events = record_inprocess(emulator, _clear_body, tmp_path)
    by_seq = {e.seq: e for e in events}
    notes = [e for e in events if e.kind is Kind.NOTE and e.name.startswith("program_cache")]
    assert [e.name for e in notes] == ["program_cache_clear", "program_cache_enable", "program_cache_miss"]
    clear, enable, miss = notes
    device = next(e.device for e in events if e.kind is Kind.DEVICE_OPEN)
    assert clear.args == {"device": device, "method": "disable_and_clear_program_cache"}
    assert enable.args == {"device": device, "method": "enable_program_cache"}
    assert clear.callsite is not None and enable.callsite.line == clear.callsite.line + 1
    assert by_seq[miss.parent].name == "relu" and miss.phase is Phase.EAGER
