"""The recorder's C hot path and its pure-Python fallback record the same sessions: every
sample recorded on each path has identical tables (times and thread ids aside), and the session
names the path it ran on."""

from __future__ import annotations

import json
import sqlite3

import pytest

from tests.recorded_samples import SAMPLE_FLAGS, SAMPLES
from tests.recorder.event_tables import calls_made, first_difference
from ttrecord.recorder import hot_path

SAMPLE_NAMES = sorted(p.stem for p in SAMPLES.glob("*.py"))
PURE = {hot_path.FORCE_PURE: "1"}
# Samples whose event order follows the OS's thread scheduling: compared by what was recorded.
INTERLEAVED = {"threads"}


def _options(path) -> dict:
    conn = sqlite3.connect(path)
    try:
        return json.loads(conn.execute("SELECT options FROM session").fetchone()[0])
    finally:
        conn.close()


@pytest.fixture(scope="module")
def c_path_built() -> None:
    chosen = hot_path.decide()
    if chosen["hot_path"] != hot_path.C:  # CI builds it (scripts/setup); say why if not here
        pytest.skip(f"the C hot path is not available here: {chosen['hot_path_reason']}")


@pytest.mark.parametrize("name", SAMPLE_NAMES)
def test_both_paths_record_identical_tables(sample_cache, c_path_built, name):
    """GIVEN a sample WHEN recorded on the C hot path and with TTRECORD_PURE_PYTHON=1 THEN each
    session names its path and their tables are identical row for row."""
    flags = SAMPLE_FLAGS.get(name, [])
    native = sample_cache.get(name, *flags)
    pure = sample_cache.get(name, *flags, env=PURE)
    assert native.returncode == pure.returncode, pure.stderr[-2000:]
    assert _options(native.path)["hot_path"] == hot_path.C, native.stderr[-2000:]
    assert _options(pure.path)["hot_path"] == hot_path.PYTHON
    assert _options(pure.path)["hot_path_reason"] == f"{hot_path.FORCE_PURE}=1"
    if name in INTERLEAVED:
        assert calls_made(native.path) == calls_made(pure.path)
    else:
        assert first_difference(native.path, pure.path) is None
