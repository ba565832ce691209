"""Every call ttnn 0.81.1's bindings accept, the emulator accepts; every name and attribute it
lacks raises the one-line NotEmulatedError. The real signatures come from
docs/emulator-ttnn-signatures.json (read from the real library in the real-ttnn lane, which
checks that file is current), so this runs without ttnn."""

from __future__ import annotations

import pytest
import torch

from ttrecord import emulator as ttnn
from ttrecord.emulator import coverage, signatures

ONE_LINE = "ttnn emulator: {} is not emulated (see docs/emulator.md)"


@pytest.fixture(scope="module")
def reference():
    return signatures.load_reference()


def test_the_reference_lists_exactly_the_exported_names(reference):
    assert len(reference) == 1090
    assert {name: entry["kind"] for name, entry in reference.items()} == dict(coverage.read_names())
    assert reference["ttnn.pad"]["overloads"][1][1][0] == "output_padded_shape"


def test_the_emulator_accepts_every_real_call_form(reference):
    found = signatures.problems(reference)
    assert found == [], "\n".join(found[:40])


def test_every_exported_name_resolves_or_says_it_is_not_emulated(reference):
    emulated = 0
    for name in reference:
        try:
            signatures.resolve(name)
            emulated += 1
        except ttnn.NotEmulatedError as e:
            assert str(e) == ONE_LINE.format(name)
    assert emulated == sum(1 for name, _ in coverage.read_names() if coverage.is_emulated(name))


def _walk(instance, qualified, names):
    """getattr every real attribute on an emulated instance: a value, or NotEmulatedError."""
    missing = []
    for name in names:
        try:
            getattr(instance, name)
        except ttnn.NotEmulatedError as e:
            assert str(e) == ONE_LINE.format(f"{qualified}.{name}")
            missing.append(name)
    return missing


def test_every_attribute_of_tensor_mesh_device_and_config_instances(reference, device):
    t = ttnn.from_torch(torch.zeros(32, 32), layout=ttnn.TILE_LAYOUT, device=device)
    grid = ttnn.CoreRangeSet({ttnn.CoreRange(ttnn.CoreCoord(0, 0), ttnn.CoreCoord(1, 0))})
    instances = {
        "ttnn.Tensor": t,
        "ttnn.MeshDevice": device,
        "ttnn.MemoryConfig": ttnn.L1_MEMORY_CONFIG,
        "ttnn.ShardSpec": ttnn.ShardSpec(grid, [32, 32], ttnn.ShardOrientation.ROW_MAJOR),
        "ttnn.CoreRangeSet": grid,
        "ttnn.CoreCoord": ttnn.CoreCoord(0, 0),
        "ttnn.CoreGrid": ttnn.CoreGrid(y=1, x=2),
        "ttnn.Shape": ttnn.Shape([1, 32]),
        "ttnn.MeshShape": ttnn.MeshShape(1, 1),
        "ttnn.WormholeComputeKernelConfig": ttnn.WormholeComputeKernelConfig(math_fidelity=ttnn.MathFidelity.HiFi2),
        "ttnn.MatmulMultiCoreReuseMultiCast1DProgramConfig": ttnn.MatmulMultiCoreReuseMultiCast1DProgramConfig(
            in0_block_w=1, per_core_M=1, per_core_N=1),
        "ttnn.Conv2dConfig": ttnn.Conv2dConfig(weights_dtype=ttnn.bfloat16),
        "ttnn.SDPAProgramConfig": ttnn.SDPAProgramConfig(q_chunk_size=32, k_chunk_size=32),
    }
    for qualified, instance in instances.items():
        names = [n for n in reference[qualified]["attributes"] if not n.startswith("__")]
        assert names, qualified
        missing = _walk(instance, qualified, names)
        assert len(missing) < len(names), qualified  # the emulated classes have most of what models read
    assert "buffer_address" in reference["ttnn.Tensor"]["attributes"] and "extract_shard" in _walk(t, "ttnn.Tensor", ["extract_shard"])


def test_the_checker_finds_each_kind_of_departure():
    fake = {
        "ttnn.reallocate": {"kind": "op", "overloads": [[["tensor", "positional_or_keyword", False],
                                                        ["no_such_param", "keyword_only", False]]]},
        "ttnn.MeshTraceId": {"kind": "class", "init": None, "attributes": {"no_such_attr": {"kind": "value"}}},
        "ttnn.DataType": {"kind": "enum", "members": ["BFLOAT16", "INT8"]},
        "ttnn.no_such_function": {"kind": "function", "overloads": [[]]},
        "ttnn.wait_for_event": {"kind": "function", "overloads": [[["cq_id", "positional_or_keyword", False],
                                                                   ["event", "positional_or_keyword", False]]]},
    }
    found = signatures.problems(fake)
    assert found == [
        "ttnn.reallocate does not accept (tensor, no_such_param) with every parameter by position",
        "ttnn.MeshTraceId.no_such_attr is missing without NotEmulatedError (a raw AttributeError)",
        "ttnn.wait_for_event does not accept (cq_id, event) with every parameter by keyword",
    ]


def test_real_keyword_names_reach_the_emulated_op():
    with pytest.raises(RuntimeError, match="must be on device"):  # reached the op: host tensors are refused
        ttnn.where(predicate=ttnn.ones([32, 32]), true_value=1.0, false_value=0.0)


def test_real_spellings_compute_the_same_values(device):
    x = ttnn.from_torch(torch.arange(64.0).reshape(8, 8), dtype=ttnn.float32, device=device)
    assert torch.equal(ttnn.to_torch(ttnn.slice(x, starts=[0, 2], ends=[8, 6], steps=[2, 1])),
                       torch.arange(64.0).reshape(8, 8)[0:8:2, 2:6])
    assert torch.equal(ttnn.to_torch(ttnn.permute(x, [1, 0], 0.0)), torch.arange(64.0).reshape(8, 8).T)
    assert ttnn.typecast(x, ttnn.float32, ttnn.bfloat16).dtype == ttnn.bfloat16
    assert ttnn.zeros_like(x, ttnn.bfloat16).dtype == ttnn.bfloat16  # dtype is zeros_like's 2nd parameter
    assert ttnn.MeshShape(s0=2, s1=4) == ttnn.MeshShape([2, 4]) == ttnn.MeshShape(shape=(2, 4))
    config = ttnn.MeshMapperConfig(None, 3)
    assert [type(p).__name__ for p in config.placements] == ["PlacementReplicate", "PlacementShard"]
    host = ttnn.Tensor(data=[1.0, 2.0, 3.0, 4.0], shape=[2, 2], data_type=ttnn.float32, layout=ttnn.ROW_MAJOR_LAYOUT)
    assert torch.equal(ttnn.to_torch(host.to(device=device, mem_config=ttnn.L1_MEMORY_CONFIG)),
                       torch.tensor([[1.0, 2.0], [3.0, 4.0]]))


def test_a_real_form_the_emulator_lacks_is_a_one_line_not_emulated_error(device):
    x = ttnn.from_torch(torch.zeros(4, 4), device=device)
    bounds = ttnn.from_torch(torch.tensor([0, 0], dtype=torch.int32), device=device)
    with pytest.raises(ttnn.NotEmulatedError) as excinfo:
        ttnn.slice(x, bounds, bounds)
    assert str(excinfo.value) == ONE_LINE.format("ttnn.slice(input_tensor, starts: ttnn.Tensor, ends: ttnn.Tensor)")
