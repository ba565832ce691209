"""The recorder's C hot path and its pure-Python fallback record the same sessions: every
sample recorded on each path has identical tables (times and thread ids aside), and the session
names the path it ran on."""

from __future__ import annotations

import json
import sqlite3

import pytest

from tests.recorded_samples import SAMPLE_FLAGS, SAMPLES
from tests.recorder.event_tables import calls_made, first_difference, session_options
from ttrecord.recorder import hot_path

SAMPLE_NAMES = sorted(p.stem for p in SAMPLES.glob("*.py"))
PURE = {hot_path.FORCE_PURE: "1"}
# Samples whose event order follows the OS's thread scheduling: compared by what was recorded.
INTERLEAVED = {"threads"}


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
    assert session_options(native.path)["hot_path"] == hot_path.C, native.stderr[-2000:]
    assert session_options(pure.path)["hot_path"] == hot_path.PYTHON
    assert session_options(pure.path)["hot_path_reason"] == f"{hot_path.FORCE_PURE}=1"
    if name in INTERLEAVED:
        assert calls_made(native.path) == calls_made(pure.path)
    else:
        assert first_difference(native.path, pure.path) is None


@pytest.mark.parametrize("rank", ["0", "1"])
def test_both_paths_record_identical_tables_for_each_rank_of_the_multihost_sample(
    sample_cache, c_path_built, rank
):
    """GIVEN samples/multihost/decode.py (the one sample outside samples/*.py) as one rank of
    a diverging launch WHEN recorded on both paths THEN the tables are identical."""
    script = SAMPLES / "multihost" / "decode.py"
    ranked = {"PMI_RANK": rank}
    native = sample_cache.get(script, program_args=("--diverge",), env=ranked)
    pure = sample_cache.get(script, program_args=("--diverge",), env={**ranked, **PURE})
    assert native.returncode == pure.returncode == 0, pure.stderr[-2000:]
    # a rank's session is named after its rank: <stem>-rank<N>-<host>.db beside the path given
    native_db, pure_db = (next(r.path.parent.glob(f"{r.path.stem}-rank{rank}-*.db"))
                          for r in (native, pure))  # fmt: skip
    assert session_options(native_db)["hot_path"] == hot_path.C
    assert session_options(pure_db)["hot_path"] == hot_path.PYTHON
    assert first_difference(native_db, pure_db) is None


def test_a_failed_call_leaves_no_cycle_keeping_the_program_s_objects(sample_cache):
    """GIVEN a sample whose capture fails in a sub-device call (the recorder notes the error
    and raises it again) WHEN main returns THEN its semaphores die then and their frees are
    recorded, on whichever path: no reference cycle through the raised error keeps its frames
    alive until the garbage collector happens to run (which follows each path's allocations)."""
    run = sample_cache.get("sub_device_load_in_capture")
    conn = sqlite3.connect(run.path)
    try:
        freed = conn.execute("SELECT args FROM events WHERE name = 'global_semaphore'"
                             " AND args LIKE '%\"free\"%'").fetchall()  # fmt: skip
    finally:
        conn.close()
    assert sorted(json.loads(a)["semaphore"] for (a,) in freed) == [1, 2]
