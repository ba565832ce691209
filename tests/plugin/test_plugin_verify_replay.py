"""Rule: --ttrecord-verify-replay checks each test's replays by value (TR011)."""

from plugin_suite import run
import pytest

pytestmark = pytest.mark.spawns

CORRUPTING_TEST = '''\
import torch
import ttnn


def test_bias_overwritten_by_replay(device):
    x = ttnn.from_torch(torch.full((32, 32), 3.0), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    ttnn.multiply(ttnn.add(x, x), 0.5)  # warm-up (else the capture compiles: TR013)
    tid = ttnn.begin_trace_capture(device, cq_id=0)
    out = ttnn.multiply(ttnn.add(x, x), 0.5)
    ttnn.end_trace_capture(device, tid, cq_id=0)
    bias = ttnn.from_torch(torch.ones(32, 64), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    ttnn.execute_trace(device, tid, cq_id=0, blocking=True)  # LINE_EXECUTE
    ttnn.to_torch(bias)  # the program uses the tensor the replay overwrote
    ttnn.release_trace(device, tid)
'''


def test_verify_replay_adds_the_value_evidence(model_suite):
    # GIVEN a test whose replay overwrites a tensor allocated after capture
    model_suite.makepyfile(test_corrupting=CORRUPTING_TEST)
    # WHEN run with and without --ttrecord-verify-replay
    plain = run(model_suite, "--ttrecord", "test_corrupting.py")
    checked = run(model_suite, "--ttrecord", "--ttrecord-verify-replay", "test_corrupting.py")
    # THEN both fail on TR004; only the verified run also shows TR011 at the execute line,
    # folded under the TR004 it proves (one mistake, one finding)
    plain.assert_outcomes(failed=1)
    checked.assert_outcomes(failed=1)
    assert "TR011" not in plain.stdout.str()
    line = next(i for i, t in enumerate(CORRUPTING_TEST.splitlines(), 1) if "LINE_EXECUTE" in t)
    checked.stdout.fnmatch_lines([f"*also caused by this: TR011*test_corrupting.py:{line}*"])
    checked.stdout.fnmatch_lines(["*test_corrupting.py::test_bias_overwritten_by_replay: TR004 x1  *"])


def test_the_marker_verifies_one_test(model_suite):
    # GIVEN two copies of the corrupting test, only one marked verify_replay=True
    marked = CORRUPTING_TEST.replace("def test_bias", "@pytest.mark.ttrecord(verify_replay=True)\ndef test_marked_bias")
    after = CORRUPTING_TEST.replace("import torch\nimport ttnn\n", "").replace("def test_bias", "def test_later_bias")
    model_suite.makepyfile(test_corrupting="import pytest\n" + CORRUPTING_TEST + "\n\n" + marked + after)
    # WHEN run with --ttrecord only
    result = run(model_suite, "--ttrecord", "test_corrupting.py")
    # THEN only the marked test reports TR011 (folded under its TR004), not the ones before
    # and after it
    result.assert_outcomes(failed=3)
    out = result.stdout.str()
    sections = out.split("_ test_")[1:]
    folded = {s.split(" ", 1)[0]: "also caused by this: TR011" in s for s in sections}
    assert folded == {"bias_overwritten_by_replay": False, "marked_bias_overwritten_by_replay": True,
                      "later_bias_overwritten_by_replay": False}, out
