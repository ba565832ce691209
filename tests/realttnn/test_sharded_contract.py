"""Sharded buffers: the emulator's p150 places them where the real ttnn 0.81.1 allocator does.

Rule: every sharded buffer (height/width/block, both orientations, TILE and ROW_MAJOR pages,
uneven shards, L1 and DRAM) gets the real buffer_address(), page count and page size; each of
its pages sits on the same core at the same address; the core behind each L1 bank of an
interleaved buffer is the real one (so interleaved/sharded overlap is decided per core); and
the allocator's live buffers (with their memory layout) match at the end.
A 1x2 mesh is pinned too, on a mocked pair of p150s joined by ethernet (p150x2_cluster_desc.yaml).
"""

from __future__ import annotations

import sys

import pytest

from realttnn_helpers import describe, emulator_python, run_script, seq_output


@pytest.fixture(scope="module")
def both(tmp_path_factory):
    cwd = tmp_path_factory.mktemp("sharded")
    real = run_script(sys.executable, "sharded_sequence.py", cwd)
    assert real.returncode == 0, describe(real)
    emu = run_script(emulator_python(), "sharded_sequence.py", cwd, env={"RTTNN_DIRECT_EMULATOR": "1"})
    assert emu.returncode == 0, describe(emu)
    return seq_output(real), seq_output(emu)


def test_real_sharded_l1_buffers_come_top_down_from_the_interleaved_l1_allocator(both):
    real, _ = both
    steps = {s[0].split()[0]: s[1:] for s in real["seq"]}
    assert steps["h"] == [1568768, 8, 2048, "HEIGHT_SHARDED"]  # 1572864 - 2 tiles x 2048
    assert steps["rmw"] == [1527808, 128, 128, "WIDTH_SHARDED"]  # row pieces of shard width
    assert steps["reuse:"][0] == steps["w"][0]  # a freed sharded block is reused


def test_emulator_places_every_sharded_buffer_at_the_real_address(both):
    real, emu = both
    diff = [f"{r}  emulator {e[1:]}" for r, e in zip(real["seq"], emu["seq"]) if r != e]
    assert emu["seq"] == real["seq"], "differing steps:\n" + "\n".join(diff)


def test_emulator_puts_each_sharded_page_on_the_real_core(both):
    real, emu = both
    differing = [k for k in real["pages"] if real["pages"][k] != emu["pages"].get(k)]
    assert not differing, f"page placement differs for {differing}: real {real['pages'][differing[0]][:6]}"
    assert emu["l1_cores"] == real["l1_cores"]


def test_emulator_allocator_view_matches_at_the_end(both):
    real, emu = both
    assert emu["buffers"] == real["buffers"], (
        f"real only: {[b for b in real['buffers'] if b not in emu['buffers']]}\n"
        f"emulator only: {[b for b in emu['buffers'] if b not in real['buffers']]}")


def test_the_coverage_name_list_is_what_the_real_library_exports(tmp_path):
    """docs/emulator-ttnn-names.tsv (docs/emulator.md's coverage table) is ttnn 0.81.1's own list."""
    from realttnn_helpers import ROOT

    proc = run_script(sys.executable, "ttnn_names.py", tmp_path)
    assert proc.returncode == 0, describe(proc)
    listed = (ROOT / "docs" / "emulator-ttnn-names.tsv").read_text()
    assert proc.stdout == listed, "regenerate: python tests/realttnn/scripts/ttnn_names.py > docs/emulator-ttnn-names.tsv"


@pytest.fixture(scope="module")
def model_ops(tmp_path_factory):
    cwd = tmp_path_factory.mktemp("model_ops")
    real = run_script(sys.executable, "model_op_placement.py", cwd)
    assert real.returncode == 0, describe(real)
    emu = run_script(emulator_python(), "model_op_placement.py", cwd, env={"RTTNN_DIRECT_EMULATOR": "1"})
    assert emu.returncode == 0, describe(emu)
    return seq_output(real), seq_output(emu)


OPS = ["tilize", "untilize", "tilize_with_val_padding", "pad", "typecast", "embedding", "rms_norm", "concat",
       "slice", "permute", "repeat", "interleaved_to_sharded", "sharded_to_interleaved", "reshard",
       "nlp_concat_heads", "plus_one"]


@pytest.mark.parametrize("op", OPS)
def test_model_op_output_placement_and_temporaries_match_the_real_op(model_ops, op):
    """Rule: the op's output lands at the real address with the real shape, and it allocates
    (and frees) exactly the buffers the real op does, as ttnn.graph records them."""
    real, emu = model_ops
    assert real[op]["error"] is None, f"the real op failed on the mock device: {real[op]['error']}"
    assert emu[op] == real[op]


def test_plus_one_really_is_in_place(model_ops):
    real, _ = model_ops
    assert real["plus_one"]["new_buffers"] == [] and real["plus_one"]["graph"] == []


def test_a_1x2_mesh_allocates_and_splits_like_the_real_one(tmp_path):
    """Rule: on a 1x2 mesh (two mocked p150s joined by ethernet) the emulator's mesh has the
    real geometry and id, allocates interleaved and sharded buffers at the real lockstep
    addresses, returns one device tensor per chip at the mesh tensor's address, and reports
    the same live buffers."""
    from realttnn_helpers import HERE

    env = {"TT_METAL_MOCK_CLUSTER_DESC_PATH": str(HERE / "p150x2_cluster_desc.yaml")}
    real = run_script(sys.executable, "mesh_sequence.py", tmp_path, env=env)
    assert real.returncode == 0, describe(real)
    emu = run_script(emulator_python(), "mesh_sequence.py", tmp_path, env={**env, "RTTNN_DIRECT_EMULATOR": "1"})
    assert emu.returncode == 0, describe(emu)
    r, e = seq_output(real), seq_output(emu)
    assert r["num_devices"] == 2 and r["shape"] == [1, 2]
    assert e == r
