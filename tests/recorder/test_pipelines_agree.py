"""The supervisor's C pipeline (store/ext/pipeline.c) and its pure-Python path (LogReader,
Decoder, SessionWriter.add) make the same sessions: every sample recorded through each has
identical tables (times and thread ids aside), and the session names the path it ran on."""

from __future__ import annotations


import pytest

from tests.recorded_samples import SAMPLE_FLAGS, SAMPLES
from tests.recorder.event_tables import calls_made, first_difference, session_options
from ttrecord.store import native

SAMPLE_NAMES = sorted(p.stem for p in SAMPLES.glob("*.py"))
PYTHON = {native.FORCE_PYTHON: "1"}
INTERLEAVED = {"threads"}  # event order follows the OS's thread scheduling


@pytest.fixture(scope="module")
def c_pipeline_built() -> None:
    _, name, why = native.choose()
    if name != native.C:  # CI builds it (scripts/setup); say why if not here
        pytest.skip(f"the C pipeline is not available here: {why}")


@pytest.mark.parametrize("name", SAMPLE_NAMES)
def test_both_pipelines_store_identical_tables(sample_cache, c_pipeline_built, name):
    """GIVEN a sample WHEN recorded through the C pipeline and with TTRECORD_PYTHON_PIPELINE=1
    THEN each session names its pipeline and their tables are identical row for row."""
    flags = SAMPLE_FLAGS.get(name, [])
    c = sample_cache.get(name, *flags)
    python = sample_cache.get(name, *flags, env=PYTHON)
    assert c.returncode == python.returncode, python.stderr[-2000:]
    assert session_options(c.path)["pipeline"] == native.C, c.stderr[-2000:]
    assert session_options(python.path)["pipeline"] == native.PYTHON
    assert session_options(python.path)["pipeline_reason"] == f"{native.FORCE_PYTHON}=1"
    if name in INTERLEAVED:
        assert calls_made(c.path) == calls_made(python.path)
    else:
        assert first_difference(c.path, python.path) is None


def test_both_pipelines_store_identical_tables_for_a_rank_of_the_multihost_sample(
    sample_cache, c_pipeline_built
):
    """GIVEN samples/multihost/decode.py as rank 1 of a diverging launch WHEN recorded through
    both pipelines THEN the tables are identical."""
    script = SAMPLES / "multihost" / "decode.py"
    ranked = {"PMI_RANK": "1"}
    c = sample_cache.get(script, program_args=("--diverge",), env=ranked)
    python = sample_cache.get(script, program_args=("--diverge",), env={**ranked, **PYTHON})
    assert c.returncode == python.returncode == 0, python.stderr[-2000:]
    c_db, python_db = (next(r.path.parent.glob(f"{r.path.stem}-rank1-*.db")) for r in (c, python))
    assert session_options(c_db)["pipeline"] == native.C
    assert session_options(python_db)["pipeline"] == native.PYTHON
    assert first_difference(c_db, python_db) is None
