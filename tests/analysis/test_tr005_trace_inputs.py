"""TR005: a captured input freed before a replay, or new input data put into a new tensor."""

from ttrecord.analysis.context import Context
from ttrecord.events import Kind
from ttrecord.testing import SessionBuilder, host_tensor, tensor

from analysis_helpers import Z, captured_step, rules_at, without_layout_luck


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


def _new_tensor_each_step(refresh: bool, x_made_at: int | None = 40) -> SessionBuilder:
    """A new tensor shaped like x made at line 40 before each replay; x itself was made by the
    same line before the capture (the evidence that the new tensors are meant as the input)."""
    b = SessionBuilder()
    tid, x, w, y = captured_step(b, x_made_at=x_made_at)
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


def test_a_new_tensor_nothing_ever_uses_is_meant_for_the_trace(analyze_both):
    # GIVEN x made by another line, and new tensors of its spec that nothing ever reads
    findings = analyze_both(_new_tensor_each_step(refresh=False, x_made_at=7))
    # THEN TR005 still: only the replay came after them (samples/stale_input.py)
    assert rules_at(findings) == [("TR005", 40)]


def test_staging_tensors_of_the_input_spec_used_later_are_not_taken_for_the_input(analyze_both):
    # GIVEN a benchmark's staging tensors of x's spec made up front at another line, a warm-up
    # replay, then each copied into x before a replay (used, but not before the first replay)
    b = SessionBuilder()
    tid, x, w, y = captured_step(b, x_made_at=7)
    staged = [b.alloc(Z), b.alloc(Z + 0x800)]
    for buf in staged:
        b.h2d(buf, line=40, name="from_torch")
    b.execute(tid, line=41)
    for buf in staged:
        b.op("ttnn.copy", [buf, x], [x], line=44)
        b.execute(tid, line=42)
        b.d2h(y, line=43)
    b.release(tid, line=45)
    # THEN no TR005: nothing says they were meant as the trace's input instead of a copy
    assert [f for f in analyze_both(b) if f.rule == "TR005"] == []


def test_new_tensor_copied_into_the_captured_input_is_not_reported(analyze_both):
    # (the staging tensors alive at the replays are TR004's layout luck, one grouped info)
    findings = analyze_both(_new_tensor_each_step(refresh=True))
    assert without_layout_luck(findings) == []
    assert [(f.rule, f.severity.value) for f in findings] == [("TR004", "info")]


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
    assert without_layout_luck(analyze_both(b)) == []


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
    assert without_layout_luck(analyze_both(b)) == []  # (bias kept past the replay: TR004 info)


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


def _executor_capture(b: SessionBuilder):
    """tt_cnn's / Whisper's traced executor: the captured L1 input is read by the model, freed
    inside the capture, and the persistent input allocated on exactly its range with its spec
    before end_trace_capture. Lines: 10 model op, 11 deallocate, 12 allocate_tensor_on_device."""
    from analysis_helpers import X, Y

    b.open_device()
    x = b.alloc(X)
    b.op("ttnn.relu", [x], [b.alloc(Y)], line=9)  # warm-up
    tid = b.begin_trace(line=20)
    y = b.alloc(Y)
    b.op("ttnn.relu", [x], [y], line=10)
    b.free(x, parent=b.op("ttnn.deallocate", [x], [], line=11).seq)
    persistent = b.alloc(X)
    b.op("ttnn.allocate_tensor_on_device", [], [persistent], line=12)
    b.end_trace(tid, line=21)
    return tid, persistent, y


def test_an_input_freed_and_reallocated_inside_the_capture_is_the_input(analyze_both):
    # GIVEN the executor shape, with the persistent input refreshed before every replay
    b = SessionBuilder()
    tid, persistent, y = _executor_capture(b)
    for _ in range(2):
        b.op("ttnn.reshard", [b.alloc(Z)], [persistent], line=30)  # output_tensor=persistent
        b.execute(tid, line=31)
        b.d2h(y, line=32)
    b.release(tid, line=33)
    # THEN no finding: the trace's input is the persistent tensor, not a trace output (the
    # never-freed reshard sources are TR004's layout luck)
    assert without_layout_luck(analyze_both(b)) == []
    ctx = Context(b.events)
    (t,) = ctx.traces
    assert [a.buffer.address for a in t.inputs()] == [persistent.address]
    assert persistent.address not in [a.buffer.address for a in t.kept()]


def test_an_input_reallocated_inside_the_capture_that_nothing_refreshes_is_tr005_at_the_replay(analyze_both):
    """GIVEN the executor shape where the step's refresh of the persistent input is skipped (UFLD's
    runner copies only `if self.input_tensor.is_sharded()`; an interleaved config skips it) THEN
    one TR005 at execute_trace, naming the in-capture reallocation that holds the input, not the
    free inside the capture (the executor's idiom)."""
    b = SessionBuilder()
    tid, persistent, y = _executor_capture(b)
    for _ in range(3):
        b.execute(tid, line=31)
        b.d2h(y, line=32)
    b.release(tid, line=33)
    findings = analyze_both(b)
    assert rules_at(findings) == [("TR005", 31)]
    f = findings[0]
    assert f.severity.value == "error" and f.occurrences == 1
    assert "allocated it again on exactly that range" in f.message
    assert "Nothing wrote it before execute_trace at model.py:31" in f.message
    assert f.evidence["held_by"]["at"] == "model.py:12"


def test_rebinding_the_persistent_input_to_a_new_tensor_is_tr005_at_that_line(analyze_both):
    # GIVEN the executor shape, but the refresh makes a new tensor (output_tensor= dropped)
    # and the name's rebinding drops the persistent input's last reference
    b = SessionBuilder()
    tid, persistent, y = _executor_capture(b)
    new = b.alloc(Z)
    b.op("ttnn.reshard", [b.alloc(Z + 0x800)], [new], line=30)
    b.free(persistent)  # no ttnn call: `self.l1_input_tensor = ...` rebinds the name
    b.execute(tid, line=31)
    b.d2h(y, line=32)
    b.release(tid, line=33)
    findings = without_layout_luck(analyze_both(b))  # (the reshard sources are kept: TR004 info)
    # THEN TR005 (not TR004) at the line that should have copied into the input
    assert rules_at(findings) == [("TR005", 30)]
    assert findings[0].severity.value == "error"
    assert "without a ttnn call" in findings[0].message
