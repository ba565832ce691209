"""The emulator against ttnn 0.81.1 on the conformance corpus (tests/conformance/corpus.py).

The reference (ttnn-0.81.1.json) was written by the real ttnn on the contract lane's mock
p150 (tests/realttnn/test_conformance_reference.py checks it is current); here the same
cases run on the emulator and every case is compared on spec and on the allocation
sequence. A case that differs must be listed, with its reason, in known_differences.py,
and a listed case that no longer differs fails until its entry is removed.
"""

from __future__ import annotations

import collections
from typing import Any

import pytest

import compare
import runner
import table
from corpus import CORPUS
from known_differences import KNOWN, NOT_COMPARED, reason_for, without_cases

REFERENCE = compare.load(compare.REFERENCE)


@pytest.fixture(scope="module")
def emulator_results() -> dict[str, Any]:
    return runner.collect("emulator", CORPUS)


@pytest.fixture(scope="module")
def result(emulator_results: dict[str, Any]) -> dict[str, dict[str, list[str]]]:
    return compare.compare_all(REFERENCE["cases"], emulator_results)


def _symptom(keys: list[str]) -> dict[str, Any]:
    cases = [c for c in CORPUS if c.key in keys]
    assert len(cases) == len(keys), "a symptom case left the corpus"
    return runner.collect("emulator", cases)


def test_the_reference_is_the_real_ttnn_on_the_whole_corpus():
    assert REFERENCE["version"] == "ttnn 0.81.1" and REFERENCE["backend"] == "real"
    assert set(REFERENCE["cases"]) == {c.key for c in CORPUS}, (
        "the corpus changed: regenerate the reference in the lane (tests/realttnn/README.md)")


def test_every_emulated_op_has_ten_cases_from_model_code_or_a_reason():
    from ttrecord.emulator.decorators import REGISTRY

    counts = collections.Counter(c.op for c in CORPUS)
    missing = sorted(op for op in REGISTRY if op not in counts and op not in NOT_COMPARED and op not in without_cases())
    assert not missing, f"emulated ops without cases: {missing}"
    assert not without_cases() & set(counts), "ops with cases now: remove them from NO_CASES_YET"
    few = {op: n for op, n in counts.items() if n < 10 and not op.startswith("scenario.")}
    assert not few, f"ops with fewer than 10 cases: {few}"
    assert all(c.source.startswith("models/") for c in CORPUS), "every case names the model file it comes from"


@pytest.mark.parametrize("key", [
    "ttnn.tilize/cnn-hs-8x64x32", "ttnn.tilize/yolo-hs-16", "ttnn.untilize/cnn-hs-4x128x64",
])
def test_tilize_of_a_sharded_activation_keeps_its_shard_spec(key):
    """ttnn 0.81.1 keeps an L1 height-sharded ROW_MAJOR input's memory config through tilize
    (tt_cnn's executors then reshard the result): same layout, buffer and shard spec."""
    real = REFERENCE["cases"][key]
    emu = _symptom([key])[key]
    assert real[0]["outputs"][0]["memory"] == "HEIGHT_SHARDED"
    assert compare.differences(real, emu) == {"spec": [], "allocation": []}


def test_embedding_of_decode_tokens_is_rank_3():
    """[1, 1, 1, 32] token ids give [1, 32, hidden] (then unsqueeze_to_4D gives rank 4)."""
    key = "ttnn.embedding/decode-1x1x1x32"
    real = REFERENCE["cases"][key]
    emu = _symptom([key])[key]
    assert real[0]["outputs"][0]["shape"] == [1, 32, 256] == emu[0]["outputs"][0]["shape"]
    assert compare.differences(real, emu)["spec"] == []


@pytest.mark.parametrize("key", [
    "scenario.trace_input_realloc/hs-8-plain", "scenario.trace_input_realloc/hs-8-tilize",
    "scenario.trace_input_realloc/hs-4-tilize",
])
def test_l1_sharded_input_freed_in_a_capture_comes_back_at_its_address(key):
    """tt_cnn's TracedModelExecutor: the L1 height-sharded input freed inside the capture and
    allocated again from its spec lands on the captured address, with the model's tilized
    (still sharded) activation alive below it."""
    real = REFERENCE["cases"][key]
    emu = _symptom([key])[key]
    first_alloc = real[0]["nodes"][0][1]
    assert real[0]["outputs"][0]["address"] == first_alloc == emu[0]["outputs"][0]["address"]
    assert compare.differences(real, emu) == {"spec": [], "allocation": []}


@pytest.mark.parametrize("key", ["ttnn.conv2d/cnn-1x1-l1-dealloc", "ttnn.conv2d/l1-3x3-dealloc"])
def test_conv2d_deallocate_activation_frees_an_l1_input(key):
    """Conv2dConfig(deallocate_activation=True) frees the L1 activation inside the call, in both
    rounds (the conv's own intermediates are a listed difference)."""
    real = REFERENCE["cases"][key]
    emu = _symptom([key])[key]
    for r, e in zip(real, emu):
        freed_input = [r["inputs"][0]["address"]]
        assert [b[0] for b in r["gone"]] == freed_input == [b[0] for b in e["gone"]]
        assert [b[0] for b in e["gone"]] == [e["inputs"][0]["address"]]


@pytest.mark.slow
def test_at_least_95_percent_of_cases_match_on_spec_and_allocation(result):
    matching = sum(1 for d in result.values() if not d["spec"] and not d["allocation"])
    assert matching >= 0.95 * len(result), f"{matching} of {len(result)} cases match"


@pytest.mark.slow
def test_every_difference_is_listed_with_its_reason(result):
    unexplained = {k: (d["spec"] + d["allocation"])[:3] for k, d in result.items()
                   if (d["spec"] or d["allocation"]) and reason_for(k) is None}
    assert not unexplained, "differences not in known_differences.py:\n" + "\n".join(
        f"{k}: {v}" for k, v in sorted(unexplained.items()))


@pytest.mark.slow
def test_no_listed_difference_is_fixed_already(result):
    different = {k for k, d in result.items() if d["spec"] or d["allocation"]}
    stale = [entry for entry in KNOWN if not any(k == entry or k.startswith(entry + "/") for k in different)]
    assert not stale, f"listed in known_differences.py but matching now (remove them): {stale}"


@pytest.mark.slow
def test_emulator_numbers_match_the_torch_reference(emulator_results):
    assert compare.numbers_failures(emulator_results) == {}


@pytest.mark.slow
def test_the_conformance_table_in_docs_is_current(emulator_results):
    text = table.section(table.render(REFERENCE["cases"], emulator_results))
    assert table.current_section(table.DOC.read_text()) == text, (
        "docs/emulator.md's conformance table is out of date: .venv/bin/python tests/conformance/table.py --write")
