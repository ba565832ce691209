"""The emulator's `ttnn.tools.trace_allocation_tracker` behaves as ttnn 0.81.1's: with
TT_METAL_TRACE_ALLOC_TRACKING=1 (read at import, so each case runs in a fresh interpreter)
execute_trace raises the real text while a buffer allocated with the trace live is alive,
unless it was acknowledged or allocated inside corruptible_allocation_scope; kernel binaries
count unless TT_METAL_TRACE_ALLOC_SKIP_PROGRAM_CACHE=1; without the variable nothing is checked."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.spawns

SCRIPT = textwrap.dedent("""
    import sys, torch
    from ttrecord import emulator as ttnn
    tracker = ttnn.tools.trace_allocation_tracker
    d = ttnn.open_device(device_id=0, trace_region_size=65536)
    mk = lambda: ttnn.from_torch(torch.ones(32, 32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=d)
    x = mk()
    ttnn.add(x, x)
    t = ttnn.begin_trace_capture(d, cq_id=0)
    y = ttnn.add(x, x)
    ttnn.end_trace_capture(d, t, cq_id=0)
    case = sys.argv[1]
    if case == "acknowledged":
        a = mk()
        tracker.acknowledge_corruptible(a)
    elif case == "scope":
        with tracker.corruptible_allocation_scope(d):
            a = mk()
    elif case == "freed":
        a = mk()
        del a
    elif case == "alive":
        a = mk()
    elif case == "compile":
        z = ttnn.relu(y, memory_config=ttnn.L1_MEMORY_CONFIG)  # L1 output, DRAM binary
        tracker.acknowledge_corruptible(z)
    try:
        ttnn.execute_trace(d, t, cq_id=0)
        print("replayed")
    except RuntimeError as e:
        print(str(e))
""")


def _run(case: str, **env: str) -> str:
    full = {k: v for k, v in os.environ.items() if not k.startswith("TT_METAL_TRACE_ALLOC")}
    full.update(env)
    p = subprocess.run([sys.executable, "-c", SCRIPT, case], capture_output=True, text=True, env=full,
                       timeout=120)  # fmt: skip
    assert p.returncode == 0, p.stderr
    return p.stdout


ON = {"TT_METAL_TRACE_ALLOC_TRACKING": "1"}


def test_a_buffer_alive_at_the_replay_raises_the_real_text():
    out = _run("alive", **ON)
    assert out.startswith("Found 1 device buffer(s) still alive before trace replay. These will be"
                          " corrupted on replay.\nBuffer ")  # fmt: skip
    assert ("Use ttnn.tools.trace_allocation_tracker.corruptible_allocation_scope() for"
            " acknowledged-corruptible tensors, or ensure temporary tensors are freed before replay.") in out


@pytest.mark.parametrize("case", ["acknowledged", "scope", "freed"])
def test_acknowledged_scoped_or_freed_buffers_pass(case):
    assert _run(case, **ON) == "replayed\n"


def test_kernel_binaries_count_unless_program_cache_is_skipped():
    assert "Found 1 device buffer(s)" in _run("compile", **ON)
    assert "[op: program cache]" in _run("compile", **ON)
    assert _run("compile", TT_METAL_TRACE_ALLOC_SKIP_PROGRAM_CACHE="1", **ON) == "replayed\n"


def test_without_the_variable_nothing_is_checked():
    assert _run("alive") == "replayed\n"
