"""`--prep` compares a capture with the prep run right before it: inputs must be the same."""

from drift_programs import copied_warm_up, new_input_for_capture, one_capture, two_captures


def test_prep_run_that_matches_its_capture_has_no_drift(run_diff_json, tmp_path):
    """GIVEN a step run once eagerly and then captured with the same buffers
    WHEN diffed with --prep THEN A is the prep run, B the capture, no drift, exit 0."""
    path = one_capture(tmp_path / "s.db")
    code, report = run_diff_json(path, "--prep")
    assert code == 0 and report["mode"] == "prep" and report["drift"] is False
    assert (report["a"]["prep"], report["b"]["prep"]) == (True, False)
    assert report["a"]["ops"] == report["b"]["ops"] == 3
    assert report["a"]["end_seq"] == report["b"]["end_seq"]  # both describe capture 1
    assert report["replay_overlaps"]["checked"] is False


def test_intermediates_moved_by_a_live_prep_output_are_not_drift(run_diff_json, tmp_path):
    """GIVEN a prep run whose output stays alive during the capture, so the capture's
    intermediates land elsewhere while x and w stay put
    WHEN diffed with --prep THEN the moved rows are listed but there is no drift (exit 0):
    no input from outside the run changed."""
    path = one_capture(tmp_path / "s.db", keep_prep_output=True)
    code, report = run_diff_json(path, "--prep")
    assert code == 0 and report["drift"] is False and report["first_divergence"] is None
    assert report["alignment"]["changed"] >= 1 and report["changed_inputs"] == []
    moved = {c["slot"] for row in report["ops"] for c in row["changes"]}
    assert "out0" in moved


def test_capture_reading_a_new_upload_instead_of_the_prep_input(run_diff_json, tmp_path):
    """GIVEN a prep run reading x and a capture reading a fresh upload made at line 5
    WHEN diffed with --prep THEN the first divergence is the matmul's input 0 and the cause is
    the upload at line 5, live only before the capture."""
    path = new_input_for_capture(tmp_path / "s.db")
    code, report = run_diff_json(path, "--prep")
    assert code == 1
    first = report["first_divergence"]
    assert first["a"]["name"] == "ttnn.matmul"
    assert first["changes"][0]["slot"] == "in0" and first["changes"][0]["field"] == "address"
    assert report["changed_inputs"] == [first["index"]]
    cause = report["cause"]["allocation"]
    assert (cause["run"], cause["call"], cause["line"]) == ("b", "ttnn.from_torch", 5)


def test_prep_of_a_chosen_capture(run_diff_json, tmp_path):
    """GIVEN a session with two captures WHEN --prep --capture 2 THEN the prep run before the
    second capture is compared with the second capture."""
    path = two_captures(tmp_path / "s.db", extra_before_second=True)
    code, report = run_diff_json(path, "--prep", "--capture", "2")
    assert report["a"]["capture"] == report["b"]["capture"] == 2
    assert report["a"]["prep"] and code == 0  # the extra buffer precedes both


def test_copied_warm_up_block_with_a_deallocate_between(run_diff_json, tmp_path):
    """GIVEN a warm-up written as a copy of the captured block at other lines, its output read
    back and deallocated and the input re-made before the capture
    WHEN diffed with --prep THEN the copy is the prep run (its frees left out), and the re-made
    input the capture reads is the drift."""
    path = copied_warm_up(tmp_path / "s.db")
    code, report = run_diff_json(path, "--prep")
    assert report["a"]["prep"] and report["a"]["ops"] == report["b"]["ops"] == 3
    assert report["alignment"]["matched"]["signature"] == 3
    assert code == 1 and report["first_divergence"]["changes"][0]["slot"] == "in0"
    assert report["cause"]["allocation"]["line"] == 36


def test_copied_warm_up_block_that_ran_another_shape(run_diff_json, tmp_path):
    """GIVEN the copied warm-up, but the capture's matmul writes into L1 (the warm-up's: DRAM)
    WHEN diffed with --prep THEN the two matmuls pair as the same op (`op`), not as one op only
    in each run."""
    path = copied_warm_up(tmp_path / "s.db", capture_buffer_type="L1")
    code, report = run_diff_json(path, "--prep")
    assert report["alignment"]["only_a"] == report["alignment"]["only_b"] == 0
    assert report["alignment"]["matched"]["op"] == 2  # the matmul and the relu reading it
    first = report["first_divergence"]
    assert first["a"]["line"] == 30 and first["b"]["line"] == 10
