"""Findings on a mesh name their chips; overlap on sharded memory is decided by placement.

- A mesh allocates in lockstep: a finding about an address of an 8x4 mesh is about each of its
  32 chips, and says so by mesh coordinate and device id (text, JSON evidence). A one-chip
  device (`open_device`) keeps its text.
- Two buffers at one bank-local address overlap only where their banks meet: a tensor sharded
  over other cores than a trace's freed intermediate, on that intermediate's L1 address, is
  not written by a replay and is not reported; on intersecting cores it is (TR004).
- The recorder asks the allocator's view (`get_buffers`) of every mesh a tensor lives on, a
  submesh included: else its buffers look freed at every snapshot.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from ttrecord.analysis import analyze
from ttrecord.analysis.context import Access, RangeIndex
from ttrecord.cli.main import main
from ttrecord.events import BufferRef
from ttrecord.meshes import Mesh
from ttrecord.placement import cores_of
from ttrecord.store.reader import Session

ROOT = Path(__file__).resolve().parents[2]
SHARDED = ROOT / "samples" / "sharded_disjoint_cores.py"


def _findings(path: Path) -> list:
    with Session.open(path) as s:
        return analyze(s)


def _line_of(path: Path, text: str) -> int:
    return next(n for n, line in enumerate(path.read_text().splitlines(), 1) if text in line)


# --- placement ----------------------------------------------------------------------------


def test_memory_config_text_names_the_cores_of_the_shard_grid():
    assert cores_of("L1 height_sharded on (0,0)-(1,0)+(5,5)-(5,5)") == {(0, 0), (1, 0), (5, 5)}
    assert cores_of("L1 interleaved") is None
    assert cores_of(None) is None
    assert cores_of("L1 height_sharded on (0,0)-(99999,99999)") is None  # data, not a plan


def test_buffers_at_one_address_overlap_only_where_their_cores_meet():
    row0 = BufferRef.of_tensor(0, "L1", 0x1000, 0x800, "L1 height_sharded on (0,0)-(3,0)")
    row1 = BufferRef.of_tensor(0, "L1", 0x1000, 0x800, "L1 height_sharded on (0,1)-(3,1)")
    corner = BufferRef.of_tensor(0, "L1", 0x1400, 0x800, "L1 block_sharded on (3,0)-(4,1)")
    everywhere = BufferRef(0, "L1", 0x1000, 0x800)  # interleaved: every bank
    assert not row0.overlaps(row1)
    assert row0.overlaps(corner) and row1.overlaps(corner)
    assert row0.overlaps(everywhere) and everywhere.overlaps(row1)
    assert row0 == BufferRef(0, "L1", 0x1000, 0x800)  # placement is not the buffer's identity
    index = RangeIndex([Access(row0, 1, "new")])
    assert not index.hits(row1) and index.hits(corner) and index.hits(everywhere)
    assert index.overlapping(row1) == []
    # AND two traces' read/write sets meet only where their buffers' cores do (TR012's pairs)
    other = RangeIndex([Access(row1, 2, "read")])
    assert not any(other.hits(p) for p in index.probes())
    assert any(RangeIndex([Access(corner, 3, "read")]).hits(p) for p in index.probes())


def test_a_sharded_tensor_on_other_cores_at_a_freed_intermediate_is_only_layout_luck(sample_cache):
    # GIVEN the sample's tensor sharded over row 1, at the L1 address of the trace's intermediate
    # on row 0 (the recorded addresses are equal), read after the replay
    run = sample_cache.get(SHARDED)
    assert run.returncode == 0, run.stderr
    # THEN no error or warning: the replay writes row 0's cores only. One latent info says so:
    # sharded on the trace's cores (another grid), the same tensor is overwritten.
    (f,) = _findings(run.path)
    assert (f.rule, f.severity.value) == ("TR004", "info")
    assert "at the same addresses on device" in f.message and "but on other cores" in f.message
    assert f.evidence["layout_luck"]["clear_of"]["other_cores"] is True
    with sqlite3.connect(run.path) as db:
        configs = {r[0] for r in db.execute("SELECT memory_config FROM tensors WHERE buffer_type = 'L1'")}
    assert configs == {"L1 height_sharded on (0,0)-(3,0)", "L1 height_sharded on (0,1)-(3,1)"}


def test_a_sharded_tensor_on_the_trace_cores_is_reported(sample_cache):
    run = sample_cache.get(SHARDED, program_args=("--same-cores",))
    assert run.returncode == 0, run.stderr
    (f,) = _findings(run.path)
    assert (f.rule, f.severity.value) == ("TR004", "error")
    assert f.line == _line_of(SHARDED, "other = ttnn.to_memory_config(")
    assert f.evidence["allocated"]["buffer_type"] == "L1"


# --- chips ----------------------------------------------------------------------------------


def test_a_finding_on_an_8x4_mesh_names_every_chip(sample_cache, capsys):
    run = sample_cache.get("galaxy_alloc_after_capture")
    assert run.returncode == 0, run.stderr
    (f,) = _findings(run.path)
    assert f.rule == "TR004"
    assert f.message.endswith(f"On chips (0,0)-(7,3), devices 0-31, of mesh {f.device} (8×4).")
    assert f.evidence["mesh"] == {"device": f.device, "shape": [8, 4]}
    chips = f.evidence["chips"]
    assert len(chips) == 32 and chips[3] == {"coord": [0, 3], "device_id": 3}
    assert chips[31] == {"coord": [7, 3], "device_id": 31}
    # AND the JSON and text outputs carry them
    assert main(["check", str(run.copy_to(Path(run.path).parent / "json"))
                 , "--format", "json"]) == 1  # fmt: skip
    (out,) = json.loads(capsys.readouterr().out)["findings"]
    assert out["evidence"]["chips"][11] == {"coord": [2, 3], "device_id": 11}
    main(["check", str(run.path)])
    assert "(2,3) device 11" in capsys.readouterr().out


def test_a_one_chip_device_keeps_its_text(sample_cache):
    run = sample_cache.get("alloc_after_capture")
    (f,) = _findings(run.path)
    assert "chips" not in f.evidence and "mesh" not in f.evidence
    assert " On chip" not in f.message


def test_mesh_labels():
    one = Mesh.from_info(1, {"mesh": {"shape": [1, 1], "device_ids": [0]}})
    t3k = Mesh.from_info(0, {"mesh": {"shape": [1, 8], "device_ids": list(range(8))}})
    pair = Mesh.from_info(2, {"mesh": {"shape": [1, 2], "device_ids": [4, 5]}})
    assert one is not None and t3k is not None and pair is not None
    assert one.label() == "device 0 (mesh 1)"  # open_device(device_id=0) is mesh 1 on ttnn 0.81.1
    assert t3k.label() == "mesh 0 (1×8, devices 0-7)"
    assert t3k.chips_text() == "chips (0,0)-(0,7), devices 0-7"
    assert pair.chips_text() == "chips (0,0) device 4 and (0,1) device 5"
    assert Mesh.from_info(0, {"mesh": {"shape": [2, 2], "device_ids": [0]}}) is None  # does not add up
    assert Mesh.from_info(0, {"mesh": "2x2"}) is None


# --- the ledger on submeshes -------------------------------------------------------------------

SUBMESH = '''\
import torch
try:
    import ttnn
except ImportError:
    from ttrecord import emulator as ttnn

mesh = ttnn.open_mesh_device(ttnn.MeshShape(8, 4))
sub = mesh.create_submeshes(ttnn.MeshShape(2, 4))[1]
x = ttnn.from_torch(torch.ones(32, 32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=sub)
y = ttnn.relu(x)  # warm-up
trace_id = ttnn.begin_trace_capture(sub, cq_id=0)
y = ttnn.relu(x)
ttnn.end_trace_capture(sub, trace_id, cq_id=0)
ttnn.execute_trace(sub, trace_id, cq_id=0)
ttnn.release_trace(sub, trace_id)
ttnn.deallocate(x)  # x lives until here
ttnn.close_mesh_device(mesh)
'''


@pytest.mark.spawns
def test_buffers_of_a_submesh_live_until_freed(tmp_path):
    # GIVEN a tensor on a submesh (its own allocator, its own id in get_buffers) read by a trace
    script, out = tmp_path / "sub.py", tmp_path / "sub.db"
    script.write_text(SUBMESH)
    proc = subprocess.run([sys.executable, "-m", "ttrecord", "run", "--backend", "emulator", "-o", str(out),
                           str(script)], capture_output=True, text=True, timeout=180)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    with sqlite3.connect(out) as db:
        sub = db.execute("SELECT DISTINCT device FROM tensors WHERE storage = 'device'").fetchall()
        (x_buffer,) = db.execute("SELECT buffer FROM tensors WHERE seq = (SELECT MIN(seq) FROM tensors"
                                 " WHERE storage = 'device') AND role = 'out'").fetchone()  # fmt: skip
        free = db.execute("SELECT p.name FROM buffers b JOIN events e ON e.seq = b.free_seq"
                          " JOIN events p ON p.seq = e.parent WHERE b.id = ?", (x_buffer,)).fetchone()  # fmt: skip
        opened = db.execute("SELECT id FROM devices").fetchall()
    # THEN the tensor's buffer is freed by its deallocate, not by a snapshot of the parent mesh
    assert len(sub) == 1 and sub != opened
    assert free == ("deallocate",)
    assert _findings(out) == []


# --- memory maps ----------------------------------------------------------------------------


def test_memory_maps_mark_by_placement_and_name_the_chips(sample_cache):
    from ttrecord.tui.memlayout import load_maps

    def maps(run) -> dict[str, int]:
        with Session.open(run.path) as s:
            return {m.title: m.hazard_count for m in load_maps(s)}

    # GIVEN the disjoint-core and the same-core runs of the sharded sample, and the 8x4 mesh
    disjoint = maps(sample_cache.get(SHARDED))
    same = maps(sample_cache.get(SHARDED, program_args=("--same-cores",)))
    galaxy = maps(sample_cache.get("galaxy_alloc_after_capture"))
    # THEN the L1 map marks the tensor only where the cores meet, as check decides
    l1 = next(t for t in same if t.endswith("· L1"))
    assert l1.startswith("device 0 (mesh ") and same[l1] == 1 and disjoint[l1] == 0
    # AND a mesh's maps are titled with its chips
    assert galaxy[next(t for t in galaxy if t.endswith("· DRAM"))] == 1
    assert all(t.startswith("mesh ") and "(8×4, devices 0-31)" in t for t in galaxy)
