"""The diff pauses the cyclic garbage collector while it builds its tuples, and always
restores it, so callers in the same process (the UI, pytest) keep collecting."""

import gc

from drift_programs import one_capture


def test_collector_is_enabled_again_after_a_diff_and_after_an_error(run_diff, tmp_path):
    """GIVEN an enabled collector WHEN a diff runs, and when a diff fails on a missing file
    THEN the collector is enabled afterwards both times."""
    a = one_capture(tmp_path / "a.db")
    b = one_capture(tmp_path / "b.db", extra_alloc=True)
    assert gc.isenabled()
    code, _, _ = run_diff(a, b)
    assert code == 1 and gc.isenabled()
    code, _, err = run_diff(a, tmp_path / "missing.db")
    assert code == 2 and "no such file" in err and gc.isenabled()
