"""A capture that never ended (the program crashed inside it) can still be diffed."""

from drift_programs import Program

from ttrecord.events import SessionStatus


def test_a_capture_that_never_ended_still_diffs(run_diff_json, tmp_path):
    """GIVEN two crashed sessions whose capture never ended, B with one more op in it
    WHEN diffed THEN the extra op is only in B, `end_seq` is null and the replay overlap is
    not checked (nothing replays an unfinished capture)."""
    paths = []
    for name, extra in (("a.db", False), ("b.db", True)):
        p = Program()
        w = p.call("ttnn.from_torch", 3)
        p.b.begin_trace(line=20)
        y = p.call("ttnn.matmul", 10, [w])
        if extra:
            p.call("ttnn.relu", 11, [y])
        paths.append(p.b.write(tmp_path / name, status=SessionStatus.CRASHED))
    code, report = run_diff_json(*paths)
    assert code == 1 and report["a"]["end_seq"] is None
    assert [(r["status"], r["b"]["line"]) for r in report["ops"]] == [("only_b", 11)]
    assert report["replay_overlaps"]["checked"] is False
