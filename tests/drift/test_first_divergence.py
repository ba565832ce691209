"""An extra allocation before a capture: the first divergent op and the allocation's line."""

from drift_programs import one_capture, two_captures


def test_extra_allocation_before_second_capture_names_op_and_line(run_diff_json, tmp_path):
    """GIVEN one session whose step is captured twice, with `ttnn.zeros` at line 30 kept live
    between the captures
    WHEN capture 1 is diffed with capture 2
    THEN the first divergent op is the second capture's matmul (line 10), whose output moved
    from where the extra buffer now sits, and the cause is the allocation at line 30."""
    path = two_captures(tmp_path / "s.db", extra_before_second=True)
    code, report = run_diff_json(path, "--capture", "1", "--capture", "2")
    assert code == 1 and report["drift"] is True
    first = report["first_divergence"]
    assert (first["a"]["name"], first["a"]["line"], first["a"]["occurrence"]) == ("ttnn.matmul", 10, 0)
    assert first["index"] == 0
    assert first["changes"] == [
        {"slot": "out0", "field": "address", "a": 0x101000, "b": 0x101800}
    ]
    cause = report["cause"]
    assert cause["kind"] == "extra_allocation"
    assert (cause["allocation"]["call"], cause["allocation"]["line"]) == ("ttnn.zeros", 30)
    assert cause["allocation"]["address"] == 0x101000 == cause["displaced_address"]


def test_missing_allocation_is_named_from_the_other_side(run_diff_json, tmp_path):
    """GIVEN session A with an extra live allocation (line 30) before its capture and B without
    WHEN A is diffed with B
    THEN the cause is a missing allocation in B: A's line-30 buffer, and B's matmul output sits
    where that buffer is in A."""
    a = one_capture(tmp_path / "a.db", extra_alloc=True)
    b = one_capture(tmp_path / "b.db")
    code, report = run_diff_json(a, b)
    assert code == 1
    assert report["first_divergence"]["a"]["name"] == "ttnn.matmul"
    cause = report["cause"]
    assert cause["kind"] == "missing_allocation" and cause["allocation"]["run"] == "a"
    assert cause["allocation"]["line"] == 30
    assert cause["displaced_address"] == report["first_divergence"]["changes"][0]["b"]


def test_text_output_shows_the_divergent_op_and_the_cause_line(run_diff, tmp_path):
    """GIVEN the two-capture session with the extra allocation
    WHEN diffed with the default text output
    THEN the text names the first divergent op's call site and the allocation's line."""
    path = two_captures(tmp_path / "s.db", extra_before_second=True)
    code, out, err = run_diff(f"{path}:1", f"{path}:2")
    assert code == 1 and err == ""
    first = out.split("First divergence", 1)[1]
    assert "ttnn.matmul at model.py:10" in first.splitlines()[1]
    assert "out0 address 0x101000 → 0x101800" in first
    cause = " ".join(out.split("Likely cause", 1)[1].split())
    assert "allocated at model.py:30 (ttnn.zeros)" in cause
