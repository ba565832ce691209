"""Where ttnn 0.81.1 puts a compiled program's kernel binaries, and what it says when a capture
compiles: measured on the mock p150 and read from the wheel's libtt_metal.so, against which the
emulator's program cache (ttrecord/emulator/program_cache.py) is modelled.

- On a card, `MeshWorkloadImpl::load_binaries` allocates a replicated DRAM buffer with 2048-byte
  pages, top-down, and inside a capture refuses with the TT_FATAL pinned below. The mock device
  has no host command queue and loads no binaries: the first `gelu` grows the program cache
  but leaves no buffer in `get_buffers` or in a graph capture, and the next tensor lands where
  it would without the compile. The emulator models the card; its binaries sit at the top of
  DRAM, so the bottom-up tensor addresses (which the lane compares) are the same on both.
- The mock segfaults on any op inside a capture, so the refusal itself is pinned by its text
  (message, condition, file and line, as the TT_FATAL macro passes them) in the library.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

MAIN_PYTHON = Path(__file__).resolve().parents[2] / ".venv" / "bin" / "python"


def _emulator(code: str) -> subprocess.CompletedProcess:
    """Run code against the emulator (which needs torch: the main .venv's python)."""
    python = str(MAIN_PYTHON) if MAIN_PYTHON.exists() else sys.executable
    env = {**os.environ, "TTRECORD_EMULATOR_KERNEL_BINARIES": "1"}  # the card's behaviour
    p = subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=120, env=env)
    if "No module named 'torch'" in p.stderr:
        pytest.skip("the emulator needs torch (the lane has none and there is no main .venv)")
    return p


def _libtt_metal() -> Path:
    try:
        import ttnn  # noqa: F401 - the lane's real ttnn
    except ImportError:  # pragma: no cover - the conftest skips the lane
        pytest.skip("real ttnn not importable")
    import importlib.util

    spec = importlib.util.find_spec("ttnn")
    assert spec is not None and spec.origin is not None
    return Path(spec.origin).parent / "build" / "lib" / "libtt_metal.so"


def test_a_compile_on_the_mock_device_loads_no_binaries(run_py):
    p = run_py("""
        dev = open_dev()
        R = ttnn._ttnn.reports
        G = ttnn._ttnn.graph
        snap = lambda: sorted([b.address, b.max_size_per_bank, str(b.buffer_type)]
                              for b in R.get_buffers([dev]))
        a = mk(dev)
        before, entries0 = snap(), dev.num_program_cache_entries()
        G.begin_graph_capture(G.RunMode.NORMAL)
        out = ttnn.gelu(a)
        nodes = G.end_graph_capture()
        allocs = [n["params"]["address"] for n in nodes if n["node_type"] == "buffer_allocate"]
        hits = [n["params"].get("program_cache_hit") for n in nodes
                if n["node_type"] == "function_start" and "program_cache_hit" in n["params"]]
        after, entries1 = snap(), dev.num_program_cache_entries()
        nxt = mk(dev)
        emit(before=before, after=after, entries=[entries0, entries1], allocs=allocs, hits=hits,
             out=out.buffer_address(), nxt=nxt.buffer_address())
        ttnn.close_device(dev)
    """)
    assert p.returncode == 0, p.describe()
    r = p.result
    assert r["entries"] == [0, 1]  # a compile
    assert r["hits"] == [False]
    assert r["allocs"] == [1050752]  # only gelu's output: no kernel-binary buffer
    assert r["after"] == r["before"] + [[1050752, 2048, "BufferType.DRAM"]]
    assert (r["out"], r["nxt"]) == (1050752, 1052800)


def test_the_emulator_places_binaries_top_down_and_leaves_tensor_addresses_alone():
    """The same sequence on the emulator: the same tensor addresses as the mock, plus the gelu
    program's binary at the top of DRAM, under the trace region (2048 B per bank)."""
    code = (
        "import torch\nfrom ttrecord import emulator as ttnn\n"
        "dev = ttnn.open_device(device_id=0, trace_region_size=1 << 20)\n"
        "mk = lambda: ttnn.from_torch(torch.zeros(32, 32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=dev)\n"
        "a = mk(); out = ttnn.gelu(a); nxt = mk()\n"
        "bufs = sorted((b.address, b.max_size_per_bank) for b in ttnn._ttnn.reports.get_buffers(dev))\n"
        "print(out.buffer_address(), nxt.buffer_address(), bufs[-1], dev.num_program_cache_entries())\n"
    )
    p = _emulator(code)
    assert p.returncode == 0, p.stderr
    top = 4_278_190_080 - (1 << 20) // 8
    assert p.stdout.split() == ["1050752", "1052800", f"({top - 2048},", "2048)", "1"]


def test_the_library_refuses_to_load_binaries_in_a_capture_with_the_emulators_text():
    """libtt_metal.so of 0.81.1 holds the message, its condition and its file, and
    load_binaries passes line 200 (0xc8) to tt_throw; the emulator raises the same text."""
    data = _libtt_metal().read_bytes()
    p = _emulator(
        "import torch\nfrom ttrecord import emulator as ttnn\n"
        "dev = ttnn.open_device(device_id=0, trace_region_size=1 << 20)\n"
        "a = ttnn.from_torch(torch.zeros(32, 32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=dev)\n"
        "ttnn.begin_trace_capture(dev, cq_id=0)\n"
        "try:\n    ttnn.gelu(a)\nexcept RuntimeError as e:\n    print(str(e).split('\\nbacktrace')[0])\n"
    )
    head, _, message = p.stdout.strip().partition("\ninfo:\n")
    assert head == "TT_FATAL @ /project/tt_metal/distributed/mesh_workload.cpp:200: !is_capturing_trace", p.stdout
    assert message.encode() + b"\0" in data
    assert b"\0!is_capturing_trace\0" in data
    assert b"/project/tt_metal/distributed/mesh_workload.cpp\0" in data
    import shutil

    if shutil.which("objdump") is None or shutil.which("nm") is None:
        pytest.skip("binutils not available")
    nm = subprocess.run(["nm", "-C", str(_libtt_metal())], capture_output=True, text=True).stdout
    start = next(int(line.split()[0], 16) for line in nm.splitlines()
                 if line.endswith("MeshWorkloadImpl::load_binaries(tt::tt_metal::distributed::MeshCommandQueue&)")
                 and " T " in line)  # fmt: skip
    text = subprocess.run(["objdump", "-d", "--no-show-raw-insn", f"--start-address={start:#x}",
                           f"--stop-address={start + 0x1000:#x}", str(_libtt_metal())],
                          capture_output=True, text=True).stdout  # fmt: skip
    lines = [int(m.group(1), 16) for m in re.finditer(r"mov\s+\$0x([0-9a-f]+),%esi\n[^\n]*tt_throw", text)]
    assert 200 in lines  # the TT_FATAL lines load_binaries raises at (0xb3, 0xb6, 0xc8)
