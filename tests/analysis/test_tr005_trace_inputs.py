"""TR005: a captured input freed before a replay, or new input data put into a new tensor."""

from ttrecord.events import Kind
from ttrecord.testing import SessionBuilder, host_tensor, tensor

from analysis_helpers import Z, captured_step, rules_at


def test_freeing_a_captured_input_before_a_replay_is_reported_at_the_deallocate(analyze_both):
    # GIVEN x, read by the trace, deallocated after capture, then the trace replayed
    b = SessionBuilder()
    tid, x, w, y = captured_step(b)
    b.execute(tid, line=30)
    dealloc = b.op("ttnn.deallocate", [x], [], line=31)
    b.free(x, parent=dealloc.seq)
    b.execute(tid, line=32)
    b.release(tid, line=33)
    findings = analyze_both(b)
    # THEN TR005 at the deallocate line, naming the input's range and the replay
    assert rules_at(findings) == [("TR005", 31)]
    assert findings[0].evidence["input"]["range"] == "[0x100000, 0x100800)"
    assert findings[0].evidence["execute"]["at"] == "model.py:32"


def test_freeing_an_input_after_the_last_replay_is_not_reported(analyze_both):
    b = SessionBuilder()
    tid, x, w, y = captured_step(b)
    b.execute(tid, line=30)
    b.free(x, parent=b.op("ttnn.deallocate", [x], [], line=31).seq)
    b.release(tid, line=33)
    assert analyze_both(b) == []


def _new_tensor_each_step(refresh: bool) -> SessionBuilder:
    b = SessionBuilder()
    tid, x, w, y = captured_step(b)
    for _ in range(2):
        new = b.alloc(Z)
        b.h2d(new, line=40, name="from_torch")  # a new device tensor shaped like x
        if refresh:
            b.op("ttnn.copy", [new, x], [x], line=41)  # copied into the captured input
        b.execute(tid, line=42)
        b.d2h(y, line=43)
        b.free(new)
    b.release(tid, line=44)
    return b


def test_new_input_tensor_instead_of_the_captured_one_is_reported_once(analyze_both):
    findings = analyze_both(_new_tensor_each_step(refresh=False))
    assert rules_at(findings) == [("TR005", 40)]
    ev = findings[0].evidence
    assert ev["new_tensor"]["address"] == "0x102000 (1056768)"
    assert ev["captured_input"]["address"] == "0x100000 (1048576)"
    assert "copy_host_to_device_tensor" in findings[0].fix
    # AND both stale replays are counted in that one finding
    assert findings[0].occurrences == 2


def test_new_tensor_copied_into_the_captured_input_is_not_reported(analyze_both):
    assert analyze_both(_new_tensor_each_step(refresh=True)) == []


def test_input_updated_with_copy_host_to_device_tensor_is_not_reported(analyze_both):
    # GIVEN a staging tensor shaped like x created each step, and x itself refreshed with
    # copy_host_to_device_tensor(host, x), which the recorder logs with x as an argument
    b = SessionBuilder()
    tid, x, w, y = captured_step(b)
    for _ in range(2):
        staging = b.alloc(Z)
        b.h2d(staging, line=40, name="from_torch")
        b._add(Kind.H2D, "copy_host_to_device_tensor", 41, inputs=(host_tensor(), tensor(x)))
        b.execute(tid, line=42)
        b.free(staging)
    b.release(tid, line=44)
    # THEN the captured input was refreshed: nothing is stale
    assert analyze_both(b) == []


def test_new_tensor_with_its_own_use_before_the_replay_is_not_reported(analyze_both):
    # GIVEN a new tensor shaped like x that the program reads itself before replaying
    # (a tensor of its own, as in alloc_after_capture.py, not a misplaced trace input)
    b = SessionBuilder()
    tid, x, w, y = captured_step(b)
    bias = b.alloc(Z)
    b.h2d(bias, line=40, name="from_torch")
    b.d2h(bias, line=41)
    b.execute(tid, line=42)
    b.release(tid, line=44)
    assert analyze_both(b) == []


def test_input_freed_and_reallocated_with_its_spec_after_capture_is_the_input(analyze_both):
    """GIVEN tt-metal's executor idiom done after end_trace_capture: the captured input freed,
    a tensor of its spec allocated on exactly its range and filled before each replay
    THEN no finding: the trace's input is the range it reads, whatever tensor holds it."""
    from analysis_helpers import X

    b = SessionBuilder()
    tid, x, w, y = captured_step(b)
    b.free(x, parent=b.op("ttnn.deallocate", [x], [], line=30).seq)
    new = b.alloc(X)
    b.op("ttnn.allocate_tensor_on_device", [], [new], line=31)
    for _ in range(2):
        b._add(Kind.H2D, "copy_host_to_device_tensor", 32, inputs=(host_tensor(), tensor(new)))
        b.execute(tid, line=33)
        b.d2h(y, line=34)
    b.release(tid, line=35)
    assert analyze_both(b) == []


def test_input_freed_and_reallocated_but_never_written_is_reported_at_the_free(analyze_both):
    """GIVEN the same, but nothing written into the new tensor before the replay
    THEN TR005 at the free, with no TR004 for the tensor on the input's range."""
    from analysis_helpers import X

    b = SessionBuilder()
    tid, x, w, y = captured_step(b)
    b.free(x, parent=b.op("ttnn.deallocate", [x], [], line=30).seq)
    new = b.alloc(X)
    b.op("ttnn.allocate_tensor_on_device", [], [new], line=31)
    b.execute(tid, line=33)
    b.release(tid, line=35)
    assert rules_at(analyze_both(b)) == [("TR005", 30)]
