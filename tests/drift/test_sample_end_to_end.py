"""End to end: record samples/address_drift.py with `ttrecord run` and diff its captures."""

import sys
from pathlib import Path

import pytest

SAMPLE = Path(__file__).parents[2] / "samples" / "address_drift.py"
TTRECORD = [sys.executable, "-m", "ttrecord"]


def _line_of(text: str) -> int:
    return next(n for n, line in enumerate(SAMPLE.read_text().splitlines(), 1) if text in line)


@pytest.fixture(scope="module")
def recorded(tmp_path_factory, sample_cache):
    """The sample recorded twice (once per test run): plain, and with --extra-alloc."""
    tmp = tmp_path_factory.mktemp("drift_sample")
    for name, args in (("plain.db", ()), ("extra.db", ("--extra-alloc",))):
        run = sample_cache.get(SAMPLE, program_args=args)
        assert run.returncode == 0, run.stderr
        run.copy_to(tmp, name)
    return tmp / "plain.db", tmp / "extra.db"


def test_extra_allocation_between_captures_is_found_at_its_line(recorded, run_diff_json):
    """GIVEN the sample recorded with --extra-alloc (one tensor kept between its two captures)
    WHEN capture 1 is diffed with capture 2
    THEN the first divergent op is the step's matmul, and the cause is the extra from_torch."""
    _, extra = recorded
    code, report = run_diff_json(str(extra), "--capture", "1", "--capture", "2")
    assert code == 1
    first = report["first_divergence"]
    assert first["a"]["name"].endswith("matmul")
    assert first["a"]["line"] == _line_of("hidden = ttnn.matmul(x, w)")
    assert [c["field"] for c in first["changes"]] == ["address"]
    cause = report["cause"]["allocation"]
    assert cause["run"] == "b" and cause["call"].endswith("from_torch")
    assert cause["line"] == _line_of("extra = ttnn.from_torch(")
    assert report["drift_by_buffer_type"][0]["kind"] == "constant_offset"


def test_without_the_extra_allocation_the_captures_match(recorded, run_diff_json):
    """GIVEN the sample recorded without the flag WHEN its two captures are diffed
    THEN no drift, exit 0; and its second capture differs from the flagged run's second."""
    plain, extra = recorded
    code, report = run_diff_json(f"{plain}:1", f"{plain}:2")
    assert code == 0 and report["drift"] is False and report["alignment"]["same"] == 3
    code, report = run_diff_json(f"{plain}:2", f"{extra}:2")
    assert code == 1 and report["cause"]["allocation"]["line"] == _line_of("extra = ttnn.from_torch(")
