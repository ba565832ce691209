"""TR012: conflicting accesses on two command queues with no happens-before path between them
(events, syncs, blocking calls), and host reads of a non-blocking readback before the host
waited for it. Each case is analyzed from the event list and from the stored session."""

from __future__ import annotations

from dataclasses import replace

from ttrecord.events import BufferRef, Kind, Phase
from ttrecord.testing import SessionBuilder, host_tensor, tensor

from analysis_helpers import W, X, Y, captured_step, without_layout_luck
from analysis_helpers import rules_at as all_rules_at


def rules_at(findings):
    """TR012's findings (these runs never release their trace: TR009 is not the subject)."""
    return [r for r in all_rules_at(findings) if r[0] != "TR009"]


def evidence(findings):
    return next(f for f in findings if f.rule == "TR012").evidence


def step_then_sync(b: SessionBuilder):
    """captured_step, then the host waits for the device (its prep run read x on CQ 0)."""
    tid, x, w, y = captured_step(b)
    b.sync(31, "ttnn.synchronize_device")
    return tid, x, w, y

OPS, IO = 0, 1


def record(b: SessionBuilder, cq: int, key: str, line: int):
    return b.sync(line, "ttnn.record_event", args={"queue": {"cq": cq, "event": key}})


def wait(b: SessionBuilder, cq: int, key: str, line: int):
    # wait_for_event(cq, event) names no device: the event says which
    return b.sync(line, "ttnn.wait_for_event", device=None, args={"queue": {"cq": cq, "event": key}})


def write(b: SessionBuilder, buf: BufferRef, cq: int, line: int):
    return b._add(Kind.H2D, "ttnn.copy_host_to_device_tensor", line, inputs=(host_tensor(), tensor(buf)),
                  cq=cq, args={"queue": {"cq": cq}})  # fmt: skip


def execute(b: SessionBuilder, tid: int, cq: int, line: int, blocking: bool = False):
    queue = {"cq": cq, **({} if blocking else {"blocking": False})}
    return b._add(Kind.TRACE_EXECUTE, "ttnn.execute_trace", line, trace=tid, phase=Phase.REPLAY, cq=cq,
                  args={"queue": queue})  # fmt: skip


def read(b: SessionBuilder, buf: BufferRef, cq: int, line: int, blocking: bool = True, tensor_id: int = 77):
    queue = {"cq": cq, **({} if blocking else {"blocking": False})}
    out = replace(host_tensor(), tensor_id=tensor_id)
    return b._add(Kind.D2H, "Tensor.cpu", line, inputs=(tensor(buf),), outputs=(out,), cq=cq,
                  args={"queue": queue})  # fmt: skip


def host_use(b: SessionBuilder, line: int, tensor_id: int = 77):
    return b._add(Kind.OP, "ttnn.to_torch", line, device=None, inputs=(replace(host_tensor(), tensor_id=tensor_id),))


def overlapped(b: SessionBuilder, steps: int = 3, wait_ops: bool = True, wait_write: bool = True):
    """tt_cnn's overlapped-input executor: x written on CQ 1 (line 40), replay on CQ 0 (42).
    Lines: 39 wait CQ 1 for the last replay, 41 record the write, 43 wait CQ 0 for it."""
    tid, x, w, y = step_then_sync(b)
    record(b, OPS, "op0", 30)
    for i in range(steps):
        if wait_ops:
            wait(b, IO, f"op{i}", 39)
        write(b, x, IO, 40)
        record(b, IO, f"w{i}", 41)
        if wait_write:
            wait(b, OPS, f"w{i}", 43)
        execute(b, tid, OPS, 42)
        record(b, OPS, f"op{i + 1}", 44)
        read(b, y, OPS, 45)  # blocking read of the output on CQ 0
    return tid


def test_the_ordered_overlapped_input_executor_has_no_finding(analyze_both):
    b = SessionBuilder()
    overlapped(b)
    assert rules_at(analyze_both(b)) == []


def test_a_replay_not_waiting_for_the_input_write_is_one_finding_at_execute_trace(analyze_both):
    b = SessionBuilder()
    overlapped(b, steps=3, wait_write=False)
    findings = analyze_both(b)
    assert rules_at(findings) == [("TR012", 42)]
    ev = evidence(findings)
    assert (ev["first"]["at"], ev["first"]["cq"], ev["first"]["access"]) == ("model.py:40", 1, "write")
    assert (ev["second"]["at"], ev["second"]["cq"], ev["second"]["access"]) == ("model.py:42", 0, "read")
    assert ev["races"] == 3  # one per step, one finding
    # the write's event (recorded at 41, after it) exists: the fix is waiting for it
    assert ev["missing_edge"].startswith("wait on CQ 0 before `ttnn.execute_trace` at model.py:42 for the"
                                         " event recorded on CQ 1 at model.py:41")
    assert ev["range"]["range"] == f"[{X:#x}, {X + 2048:#x})"


def test_a_write_not_waiting_for_the_previous_replay_is_a_read_write_race_at_the_write(analyze_both):
    b = SessionBuilder()
    tid, x, w, y = step_then_sync(b)
    for i in range(3):
        write(b, x, IO, 40)
        record(b, IO, f"w{i}", 41)
        wait(b, OPS, f"w{i}", 43)
        execute(b, tid, OPS, 42)  # no read of the output: the host never waits for CQ 0
    findings = analyze_both(b)
    assert rules_at(findings) == [("TR012", 40)]
    ev = evidence(findings)
    assert (ev["first"]["at"], ev["first"]["access"], ev["second"]["access"]) == ("model.py:42", "read", "write")


def test_a_blocking_read_on_cq0_orders_what_the_host_enqueues_next_on_cq1(analyze_both):
    # GIVEN no event from CQ 0 to CQ 1, but a blocking read of the output on CQ 0 after each
    # replay: the host waited for CQ 0, so the next write on CQ 1 comes after the replay
    b = SessionBuilder()
    overlapped(b, wait_ops=False)
    assert rules_at(analyze_both(b)) == []


def test_a_blocking_execute_trace_is_a_host_wait(analyze_both):
    b = SessionBuilder()
    tid, x, w, y = step_then_sync(b)
    for i in range(2):
        write(b, x, IO, 40)
        record(b, IO, f"w{i}", 41)
        wait(b, OPS, f"w{i}", 43)
        execute(b, tid, OPS, 42, blocking=True)
    assert rules_at(analyze_both(b)) == []


def test_a_read_event_recorded_before_the_read_is_pinned_at_the_record(analyze_both):
    # tt-metal #41720: CQ 0 waits for read_event before the replay overwrites y, but the event
    # was recorded on CQ 1 before the non-blocking read of y was enqueued
    b = SessionBuilder()
    tid, x, w, y = captured_step(b)
    record(b, IO, "r0", 30)
    for i in range(3):
        wait(b, OPS, f"r{i}", 50)
        execute(b, tid, OPS, 51)
        record(b, OPS, f"op{i}", 52)
        wait(b, IO, f"op{i}", 53)
        record(b, IO, f"r{i + 1}", 54)
        read(b, y, IO, 55, blocking=False, tensor_id=100 + i)
    b.sync(60, "ttnn.synchronize_device")
    findings = analyze_both(b)
    assert rules_at(findings) == [("TR012", 54)]
    ev = evidence(findings)
    assert ev["stale_event"]["recorded_at"] == "model.py:54"
    assert (ev["first"]["at"], ev["second"]["at"]) == ("model.py:55", "model.py:51")
    assert ev["missing_edge"].startswith("record the event on CQ 1 after `Tensor.cpu` at model.py:55")


def test_the_read_event_recorded_after_the_read_is_no_finding(analyze_both):
    b = SessionBuilder()
    tid, x, w, y = captured_step(b)
    record(b, IO, "r0", 30)
    for i in range(3):
        wait(b, OPS, f"r{i}", 50)
        execute(b, tid, OPS, 51)
        record(b, OPS, f"op{i}", 52)
        wait(b, IO, f"op{i}", 53)
        read(b, y, IO, 55, blocking=False, tensor_id=100 + i)
        record(b, IO, f"r{i + 1}", 54)
    b.sync(60, "ttnn.synchronize_device")
    assert rules_at(analyze_both(b)) == []


def test_a_host_use_of_a_nonblocking_read_before_any_wait_is_a_finding_at_the_use(analyze_both):
    b = SessionBuilder()
    tid, x, w, y = captured_step(b)
    execute(b, tid, OPS, 30)
    read(b, y, OPS, 31, blocking=False)
    host_use(b, 32)
    findings = analyze_both(b)
    assert rules_at(findings) == [("TR012", 32)]
    assert evidence(findings)["second"]["cq"] == "host"
    assert "ttnn.synchronize_device(device, cq_id=0)" in evidence(findings)["missing_edge"]


def test_synchronize_device_or_an_event_after_the_read_makes_the_host_use_safe(analyze_both):
    for sync in ("device", "event"):
        b = SessionBuilder()
        tid, x, w, y = captured_step(b)
        execute(b, tid, OPS, 30)
        read(b, y, OPS, 31, blocking=False)
        if sync == "device":
            b.sync(32, "ttnn.synchronize_device")
        else:
            record(b, OPS, "after-read", 32)
            b.sync(33, "ttnn.event_synchronize", device=None, args={"queue": {"event": "after-read"}})
        host_use(b, 34)
        assert rules_at(analyze_both(b)) == [], sync


def test_synchronizing_the_other_queue_does_not_cover_a_read(analyze_both):
    # synchronize_device(device, cq_id=1) waits for CQ 1 only; the read ran on CQ 0
    b = SessionBuilder()
    tid, x, w, y = captured_step(b)
    read(b, y, OPS, 31, blocking=False)
    b.sync(32, "ttnn.synchronize_device", cq=1, args={"queue": {"cq": 1}})
    host_use(b, 34)
    assert rules_at(analyze_both(b)) == [("TR012", 34)]


def test_accesses_to_different_buffers_on_two_queues_do_not_race(analyze_both):
    b = SessionBuilder()
    tid, x, w, y = captured_step(b)
    other = b.alloc(0x200000)
    for _ in range(3):
        write(b, other, IO, 40)
        execute(b, tid, OPS, 42)
    assert rules_at(without_layout_luck(analyze_both(b))) == []  # (`other` kept: TR004 info)


def test_an_op_on_cq0_reading_a_buffer_written_on_cq1_without_a_wait(analyze_both):
    b = SessionBuilder()
    b.open_device()
    x, out = b.alloc(X), b.alloc(Y)
    write(b, x, IO, 40)
    b.op("ttnn.relu", [x], [out], line=41)
    b.d2h(out, line=42)
    findings = analyze_both(b)
    assert rules_at(findings) == [("TR012", 41)]
    assert findings[0].severity.value == "error"  # the host reads relu's result below


def test_a_warm_up_whose_results_are_never_read_is_latent_info(analyze_both):
    # GIVEN a compile run on CQ 0 reading inputs never written yet, racing with the first
    # input write on CQ 1, whose results (through a chain of ops) nobody reads
    b = SessionBuilder()
    b.open_device()
    x, h, out = b.alloc(X), b.alloc(Y), b.alloc(0x102000)
    b.op("ttnn.mul", [x], [h], line=55)
    b.op("ttnn.add", [h], [out], line=56)
    b.free(h)
    b.free(out)
    write(b, x, IO, 127)
    findings = analyze_both(b)
    # THEN one TR012, as info, saying why no value the program uses changed
    (f,) = [f for f in findings if f.rule == "TR012"]
    assert (f.line, f.severity.value) == (127, "info")
    assert "never used" in f.evidence["latent"] and "Latent in this run" in f.message


def test_the_same_race_whose_result_is_read_stays_an_error(analyze_both):
    b = SessionBuilder()
    b.open_device()
    x, h, out = b.alloc(X), b.alloc(Y), b.alloc(0x102000)
    b.op("ttnn.mul", [x], [h], line=55)
    b.op("ttnn.add", [h], [out], line=56)
    write(b, x, IO, 127)
    read(b, out, OPS, 60)
    (f,) = [f for f in analyze_both(b) if f.rule == "TR012"]
    assert (f.line, f.severity.value) == (127, "error")


def test_one_missing_wait_before_several_reads_is_one_finding(analyze_both):
    # GIVEN three replays on CQ 0, then three blocking reads of their outputs on CQ 1 with no
    # event between: one wait on CQ 1 before the first read orders all three
    b = SessionBuilder()
    tid, x, w, y = step_then_sync(b)
    outs = [y, b.alloc(0x102000), b.alloc(0x102800)]
    execute(b, tid, OPS, 136)
    b.op("ttnn.relu", [y], [outs[1]], line=137, cq=OPS, args={"queue": {"cq": OPS}})
    b.op("ttnn.relu", [y], [outs[2]], line=138, cq=OPS, args={"queue": {"cq": OPS}})
    for i, buf in enumerate(outs):
        read(b, buf, IO, 140 + 4 * i)
    findings = [f for f in analyze_both(b) if f.rule == "TR012"]
    # THEN one error at the first read, the others listed as racing through the same gap
    assert [(f.line, f.severity.value) for f in findings] == [(140, "error")]
    assert {a["at"] for a in findings[0].evidence["also"]} == {"model.py:144", "model.py:148"}


# -- frees and releases are writes (tt-xla #5828); allocation site and argument roles ---------


def replays_on_cq1(b: SessionBuilder, made_x_at: int = 9):
    """captured_step with x made by a call at `made_x_at`; the host waits; then a replay on
    CQ 1 (line 42) the host never waits for. Returns (trace id, x)."""
    b.open_device()
    made = b.h2d(None, line=made_x_at, name="ttnn.from_torch")
    x = b.alloc(X, parent=made.seq)  # the recorder writes an allocation under its call
    b.alloc(W)
    y = b.alloc(Y)
    b.op("ttnn.relu", [x], [y], line=10)  # the warm-up
    b.free(y)
    tid = b.begin_trace(line=20)
    y = b.alloc(Y)
    b.op("ttnn.relu", [x], [y], line=10)
    b.end_trace(tid, line=21)
    b.sync(31, "ttnn.synchronize_device")
    execute(b, tid, IO, 42)
    return tid, x


def test_freeing_a_buffer_a_replay_on_another_queue_reads_is_a_race_at_the_free(analyze_both):
    b = SessionBuilder()
    tid, x = replays_on_cq1(b)
    dealloc = b.op("ttnn.deallocate", [x], [], line=50)
    b.free(x, parent=dealloc.seq)
    b.sync(51, "ttnn.synchronize_device")
    b.release(tid, 52)
    findings = analyze_both(b)
    assert rules_at(findings) == [("TR012", 50)]
    f = next(f for f in findings if f.rule == "TR012")
    ev = f.evidence
    assert (ev["first"]["at"], ev["first"]["cq"], ev["first"]["argument"]) == ("model.py:42", 1, f"trace_id={tid}")
    assert (ev["second"]["call"], ev["second"]["access"], ev["second"]["argument"]) == ("ttnn.deallocate", "free", "tensor")
    assert ev["allocated_at"] == "model.py:9"  # the from_torch that made x
    assert "synchronize_device(device, cq_id=1)" in ev["missing_edge"]
    assert "allocated at model.py:9" in f.message and f.severity.value == "error"


def test_releasing_a_trace_under_its_nonblocking_replay_on_another_queue_is_a_race(analyze_both):
    b = SessionBuilder()
    tid, x = replays_on_cq1(b)
    b.release(tid, 52)
    findings = analyze_both(b)
    assert rules_at(findings) == [("TR012", 52)]
    f = next(f for f in findings if f.rule == "TR012")
    assert f.evidence["second"]["access"] == "release"
    assert f.evidence["second"]["argument"] == f"trace_id={tid}"
    assert "tt-xla #5828" in f.message


def test_a_free_or_release_after_the_host_waited_for_the_replay_is_ordered(analyze_both):
    b = SessionBuilder()
    tid, x = replays_on_cq1(b)
    b.sync(49, "ttnn.synchronize_device")
    dealloc = b.op("ttnn.deallocate", [x], [], line=50)
    b.free(x, parent=dealloc.seq)
    b.release(tid, 52)
    assert rules_at(analyze_both(b)) == []


def test_a_free_on_the_queue_that_used_the_buffer_is_ordered_by_program_order(analyze_both):
    # y = op(x); deallocate(x) on one queue: any reuse of x's memory on that queue comes later
    b = SessionBuilder()
    tid, x, w, y = step_then_sync(b)
    record(b, OPS, "r0", 30)
    execute(b, tid, OPS, 42)
    dealloc = b.op("ttnn.deallocate", [x], [], line=50)
    b.free(x, parent=dealloc.seq)
    write(b, w, IO, 60)  # makes the program a two-queue one; w is not the freed buffer
    b.sync(61, "ttnn.synchronize_device")
    assert [r for r in rules_at(analyze_both(b)) if r[1] == 50] == []


def test_each_call_names_the_argument_that_touched_the_raced_buffer(analyze_both):
    b = SessionBuilder()
    overlapped(b, steps=1, wait_write=False)
    ev = evidence(analyze_both(b))
    assert ev["first"]["argument"] == "device_tensor"  # copy_host_to_device_tensor(host, device)
    assert ev["second"]["argument"].startswith("trace_id=")


def test_the_free_under_replay_sample_names_allocation_lines_and_arguments(sample_cache, tmp_path, capsys):
    """samples/free_under_replay.py: the input freed (line 62) and the trace released (line 69)
    under non-blocking replays on CQ 1 (line 50), each naming what it races with."""
    import json
    import shutil

    from ttrecord.cli.main import main

    db = tmp_path / "s.db"
    shutil.copy(sample_cache.get("free_under_replay").path, db)
    assert main(["check", "--format", "json", str(db)]) == 1
    found = {f["line"]: f["evidence"] for f in json.loads(capsys.readouterr().out)["findings"]}
    assert sorted(found) == [62, 69]
    free, release = found[62], found[69]
    assert (free["second"]["call"], free["second"]["argument"]) == ("deallocate", "tensor")
    assert (free["first"]["at"], free["first"]["cq"]) == ("free_under_replay.py:50", 1)
    assert free["allocated_at"] == "free_under_replay.py:31"  # tile(): x's from_torch
    assert (release["second"]["access"], release["second"]["argument"]) == ("release", "trace_id=1")
    assert release["allocated_at"] == "free_under_replay.py:38"  # end_trace_capture: the trace buffer


def test_a_wait_for_an_older_event_when_a_covering_one_exists_is_pinned_at_the_read(analyze_both):
    """GIVEN ViT's two-queue loop with the wait for the output copy's event dropped: CQ 0 records
    first_op_event (50), replays (51), copies the output to DRAM (52) and records last_op_event
    (53); CQ 1 waits only for first_op_event (54) and reads the DRAM output (55) THEN one error at
    the read: an event recorded after the copy exists (53), the fix is waiting for it there, not
    moving first_op_event (which the next input write relies on)."""
    b = SessionBuilder()
    tid, x, w, y = captured_step(b)
    dram = b.alloc(0x200000)
    for i in range(2):
        record(b, OPS, f"first{i}", 50)
        execute(b, tid, OPS, 51)
        b._add(Kind.OP, "ttnn.to_memory_config", 52, inputs=(tensor(y),), outputs=(tensor(dram),),
               cq=OPS, args={"queue": {"cq": OPS}})  # fmt: skip
        record(b, OPS, f"last{i}", 53)
        wait(b, IO, f"first{i}", 54)
        read(b, dram, IO, 55, blocking=False, tensor_id=200 + i)
        b.sync(56, "ttnn.synchronize_device")
        host_use(b, 57, tensor_id=200 + i)
    findings = without_layout_luck(analyze_both(b))
    assert rules_at(findings) == [("TR012", 55)]
    ev = evidence(findings)
    assert "stale_event" not in ev
    assert (ev["first"]["at"], ev["second"]["at"]) == ("model.py:52", "model.py:55")
    assert ev["missing_edge"] == ("wait on CQ 1 before `Tensor.cpu` at model.py:55 for the event recorded"
                                  " on CQ 0 at model.py:53, after `ttnn.to_memory_config` at model.py:52"
                                  " (ttnn.wait_for_event(1, event))")
