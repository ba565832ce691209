"""A buffer both runs keep live, but at another address, is named as the cause when it sits
exactly where the other run put the diverging tensor."""

from drift_programs import output_kept_between_captures


def test_first_capture_output_still_live_is_the_cause(run_diff_json, tmp_path):
    """GIVEN a step captured twice, the first capture's softmax output (line 13) still live
    during the second, the prep run's output freed in between
    WHEN capture 1 is diffed with capture 2
    THEN the matmul's output moved, and the cause is the line-13 allocation B keeps where A
    put that output, with A's counterpart (the prep run's output) elsewhere."""
    path = output_kept_between_captures(tmp_path / "s.db")
    code, report = run_diff_json(f"{path}:1", f"{path}:2")
    assert code == 1
    first = report["first_divergence"]
    assert first["a"]["name"] == "ttnn.matmul"
    (change,) = first["changes"]
    cause = report["cause"]
    assert cause["kind"] == "moved_allocation"
    assert (cause["allocation"]["run"], cause["allocation"]["line"]) == ("b", 13)
    assert cause["allocation"]["address"] == change["a"] == cause["displaced_address"]
    assert cause["counterpart"]["run"] == "a" and cause["counterpart"]["line"] == 13
    assert cause["counterpart"]["address"] != cause["allocation"]["address"]
    assert report["live_differences"] == []
