"""Identical runs report no drift and exit 0."""

from drift_programs import one_capture, two_captures


def test_two_recordings_of_the_same_program_have_no_drift(run_diff_json, tmp_path):
    """GIVEN the same program recorded twice WHEN diffed THEN every op aligns, nothing changed,
    no cause, exit 0."""
    a = one_capture(tmp_path / "a.db")
    b = one_capture(tmp_path / "b.db")
    code, report = run_diff_json(a, b)
    assert code == 0 and report["drift"] is False
    assert report["alignment"] == {"method": "identical", "same": 3, "changed": 0,
                                   "only_a": 0, "only_b": 0, "key": "call_site",
                                   "matched": {"exact": 3, "signature": 0, "call_site": 0, "op": 0,
                                               "reordered": 0}}  # fmt: skip
    assert report["first_divergence"] is None and report["cause"] is None
    assert report["ops"] == [] and report["live_differences"] == []
    assert [g["kind"] for g in report["drift_by_buffer_type"]] == ["unchanged"]
    assert (report["replay_overlaps"]["a_over_b"], report["replay_overlaps"]["b_over_a"]) == (0, 0)


def test_two_captures_of_one_session_without_extra_allocation_match(run_diff, tmp_path):
    """GIVEN one session capturing the same step twice, nothing left live in between
    WHEN capture 1 is diffed with capture 2 THEN the text says no drift and the exit is 0."""
    path = two_captures(tmp_path / "s.db", extra_before_second=False)
    code, out, err = run_diff(path, "--capture", "1", "--capture", "2")
    assert code == 0 and err == ""
    assert "No drift: 3 ops aligned" in out

