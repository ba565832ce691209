"""docs/emulator.md's coverage table is generated from the names ttnn 0.81.1 exports and
says "emulated" exactly for the names the emulator resolves."""

from __future__ import annotations

from ttrecord.emulator import coverage
from ttrecord.emulator.decorators import REGISTRY


def test_the_coverage_table_in_the_docs_is_up_to_date():
    assert coverage.main(["--check"]) == 0, "run: python -m ttrecord.emulator.coverage"


def test_the_table_marks_a_name_emulated_only_when_the_emulator_resolves_it():
    table = coverage.render([("ttnn.reshard", "op"), ("ttnn.experimental.conv3d", "op")])
    assert "| `ttnn.reshard` | op | yes |" in table and "| `ttnn.experimental.conv3d` | op | no |" in table
    assert table.startswith("1 of 2 names")


def test_every_emulated_op_is_a_real_ttnn_0_81_1_name():
    real = {name for name, _ in coverage.read_names()}
    assert len(real) > 1000
    assert sorted(q for q in REGISTRY if q not in real) == []


def test_the_ops_models_call_are_covered():
    names = dict(coverage.read_names())
    for name in ("ttnn.reshard", "ttnn.tilize", "ttnn.untilize", "ttnn.plus_one", "ttnn.unsqueeze_to_4D",
                 "ttnn.experimental.paged_update_cache", "ttnn.experimental.all_gather_async",
                 "ttnn.transformer.paged_scaled_dot_product_attention_decode", "ttnn.ShardSpec",
                 "ttnn.CoreRangeSet", "ttnn.ShardTensor2dMesh", "ttnn.get_device_tensors"):
        assert name in names and coverage.is_emulated(name), name
