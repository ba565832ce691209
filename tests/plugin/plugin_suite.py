"""A small ttnn test suite to run under `pytest --ttrecord` in a child pytest, and helpers."""

from __future__ import annotations

import pytest

# The suite's conftest imports ttnn at module level, as model repositories' conftests do: the
# plugin must have put the backend and its proxy in place before conftest files load.
CONFTEST = '''\
import pytest
import ttnn


@pytest.fixture
def device():
    d = ttnn.open_device(device_id=0, trace_region_size=800768)
    yield d
    ttnn.close_device(d)
'''

MODEL_TESTS = '''\
import pytest
import torch
import ttnn


def tensors(device):
    return [ttnn.from_torch(torch.randn(32, 32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT,
                            device=device) for _ in range(2)]


def decode_step(x, w):
    h = ttnn.matmul(x, w)
    return ttnn.to_torch(h)


def test_clean_trace(device):
    x, w = tensors(device)
    ttnn.matmul(x, w)
    tid = ttnn.begin_trace_capture(device, cq_id=0)
    out = ttnn.matmul(x, w)
    ttnn.end_trace_capture(device, tid, cq_id=0)
    ttnn.execute_trace(device, tid, cq_id=0)
    ttnn.to_torch(out)
    ttnn.release_trace(device, tid)


def test_readback_in_capture(device):
    x, w = tensors(device)
    ttnn.matmul(x, w)  # warm-up: a compile inside the capture would be a second hazard (TR013)
    tid = ttnn.begin_trace_capture(device, cq_id=0)
    h = ttnn.matmul(x, w)
    try:
        ttnn.to_torch(h)  # LINE_READBACK
    except RuntimeError:
        pass  # the emulator raises real ttnn's TT_FATAL; the test swallows it
    ttnn.end_trace_capture(device, tid, cq_id=0)
    ttnn.release_trace(device, tid)


@pytest.mark.ttrecord(audit_region="decode_step")
def test_audited_decode(device):
    decode_step(*tensors(device))


def test_unaudited_decode(device):
    decode_step(*tensors(device))


def test_without_ttnn():
    assert sum([1, 2]) == 3
'''


def line_of(marker: str) -> int:
    """The line of MODEL_TESTS holding `marker`, as pytest reports it."""
    return next(i for i, text in enumerate(MODEL_TESTS.splitlines(), 1) if marker in text)


# Plugins the child runs do not need; blocking them saves seconds of imports per run.
QUIET = ("-p", "no:cacheprovider", "-p", "no:textual-snapshot", "-p", "no:syrupy",
          "-p", "no:hypothesispytest")  # fmt: skip


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    """pytest in a child process on the emulator.

    A child, because the plugin installs the emulator as `ttnn` in the process it runs in, and
    torch (which the emulator computes with) cannot be imported twice in one process.
    """
    return pytester.runpytest_subprocess(*QUIET, "--ttrecord-backend", "emulator", *args,
                                         timeout=180)  # fmt: skip
