"""Drift per device and buffer type (constant offset vs reshuffled), and replay overlaps."""

from drift_programs import Program, one_capture


def _swapped_uploads(path, swap: bool) -> str:
    p = Program()
    if swap:
        x = p.call("ttnn.from_torch", 4)
        w = p.call("ttnn.from_torch", 3)
    else:
        w = p.call("ttnn.from_torch", 3)
        x = p.call("ttnn.from_torch", 4)
    p.capture(x, w)
    return p.write(path)


def test_one_extra_allocation_is_a_constant_offset(run_diff_json, tmp_path):
    """GIVEN B with one extra 2 KiB buffer below the step's intermediates
    WHEN diffed THEN DRAM drift is a constant +2048 offset for the buffers that moved, and the
    weights and input below it stayed."""
    code, report = run_diff_json(one_capture(tmp_path / "a.db"),
                                 one_capture(tmp_path / "b.db", extra_alloc=True))  # fmt: skip
    (group,) = report["drift_by_buffer_type"]
    assert (group["device"], group["buffer_type"], group["kind"]) == (0, "DRAM", "constant_offset")
    assert (group["buffers"], group["moved"]) == (4, 2)
    assert group["offsets"] == [{"offset": 2048, "buffers": 2}]


def test_swapped_allocation_order_is_reshuffled(run_diff_json, tmp_path):
    """GIVEN B uploading input and weights in the opposite order WHEN diffed
    THEN the two buffers moved in opposite directions: reshuffled, +2048 and -2048."""
    code, report = run_diff_json(_swapped_uploads(tmp_path / "a.db", swap=False),
                                 _swapped_uploads(tmp_path / "b.db", swap=True))  # fmt: skip
    assert code == 1
    (group,) = report["drift_by_buffer_type"]
    assert group["kind"] == "reshuffled" and group["moved"] == 2
    assert sorted(o["offset"] for o in group["offsets"]) == [-2048, 2048]


def test_trace_range_over_a_buffer_live_in_the_other_replay(run_diff_json, tmp_path):
    """GIVEN A without and B with an extra buffer (line 30) at A's matmul output address
    WHEN diffed THEN A's trace range at that address overlaps B's extra buffer, live in B's
    replay, and the example names both."""
    code, report = run_diff_json(one_capture(tmp_path / "a.db"),
                                 one_capture(tmp_path / "b.db", extra_alloc=True))  # fmt: skip
    overlaps = report["replay_overlaps"]
    assert overlaps["checked"] and overlaps["a_over_b"] >= 1
    extra = report["cause"]["allocation"]
    hits = [o for o in overlaps["examples"]
            if o["trace_run"] == "a" and o["live_alloc_seq"] == extra["alloc_seq"]]  # fmt: skip
    assert [(o["address"], o["live_address"]) for o in hits] == [(0x101000, 0x101000)]
