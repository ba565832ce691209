"""Rule: two live traces that share memory fail a test under --ttrecord only when a value one
trace wrote is read after the other trace's replay overwrote it (TR010 follows the data)."""

from plugin_suite import run
import pytest

pytestmark = pytest.mark.spawns

MULTI_TRACE = '''\
import torch
import ttnn


def host(value):
    return ttnn.from_torch(torch.full((32, 32), value), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)


def model_a(x, w):
    hidden = ttnn.add(x, w)  # freed at the end of capture A, still written by A's replays
    return ttnn.multiply(hidden, 2.0)


def model_b(x):
    return ttnn.add(x, 1.0)  # lands on A's freed intermediate


def capture_both(device):
    x_a, x_b, w = (ttnn.to_device(host(v), device) for v in (1.0, 1.0, 20.0))
    out_a = model_a(x_a, w)
    out_b = model_b(x_b)
    del out_b
    a = ttnn.begin_trace_capture(device, cq_id=0)
    out_a = model_a(x_a, w)
    ttnn.end_trace_capture(device, a, cq_id=0)
    b = ttnn.begin_trace_capture(device, cq_id=0)
    out_b = model_b(x_b)
    ttnn.end_trace_capture(device, b, cq_id=0)
    return a, b, x_a, x_b, w, out_a, out_b


def test_each_output_read_after_its_own_replay(device):
    a, b, x_a, x_b, w, out_a, out_b = capture_both(device)
    for value in (2.0, 3.0):
        ttnn.copy_host_to_device_tensor(host(value), x_b)
        ttnn.execute_trace(device, b, cq_id=0)
        ttnn.execute_trace(device, a, cq_id=0)  # overwrites B's output...
        ttnn.execute_trace(device, b, cq_id=0)  # ...which B writes again before it is read
        assert ttnn.to_torch(out_b)[0, 0].item() == value + 1.0
        assert ttnn.to_torch(out_a)[0, 0].item() == 42.0
    ttnn.release_trace(device, a)
    ttnn.release_trace(device, b)


def test_output_read_after_the_other_trace_overwrote_it(device):
    a, b, x_a, x_b, w, out_a, out_b = capture_both(device)
    ttnn.execute_trace(device, b, cq_id=0)
    ttnn.execute_trace(device, a, cq_id=0)
    ttnn.to_torch(out_b)  # LINE_OVERWRITTEN_READ
    ttnn.release_trace(device, a)
    ttnn.release_trace(device, b)
'''


def test_multi_trace_fails_only_where_an_overwritten_value_is_read(pytester):
    # GIVEN tt-metal's multi-trace shape: trace B's output on trace A's freed intermediate
    from plugin_suite import CONFTEST

    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_multi=MULTI_TRACE)
    line = next(i for i, t in enumerate(MULTI_TRACE.splitlines(), 1) if "LINE_OVERWRITTEN_READ" in t)
    # WHEN both tests run under --ttrecord
    result = run(pytester, "--ttrecord", "-p", "no:randomly")
    # THEN the test that reads B's output only after B's own replay passes (an info note is
    # below the default fail level), and the one that reads it after A's replay fails there
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines([
        f"TR010 error test_multi.py:{line} in test_output_read_after_the_other_trace_overwrote_it:*",
        "FAILED test_multi.py::test_output_read_after_the_other_trace_overwrote_it*",
    ])  # fmt: skip
    result.stdout.no_fnmatch_line("FAILED test_multi.py::test_each_output_read_after_its_own_replay*")
