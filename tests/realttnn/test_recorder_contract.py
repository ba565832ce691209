"""`ttrecord run --backend ttnn` against the real ttnn 0.81.1 on a mock p150.

Each test records one script from tests/realttnn/scripts/ and reads the session file with
plain SQL (schema: ttrecord/store/schema.py), so a failure names the column that disagrees
with what the real library did. Scripts mark their interesting lines with `# MARK:<name>`.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from realttnn_helpers import (
    describe,
    emulator_python,
    events,
    marks,
    op_name_matches,
    rows,
    run_script,
    seq_output,
    session,
    tensors,
    ttrecord_run,
)

READ_FATAL = "Reads are not supported during trace capture."


def _calls_at(evs, line):
    return [e for e in evs if e["cs_line"] == line and e["kind"] not in ("alloc", "free")]


def _alloc_free(db):
    """(kind, buffer_type, address, size) of every alloc/free event, in order."""
    return [(r["kind"], r["buffer_type"], r["address"], r["size"]) for r in rows(
        db, "SELECT e.kind, b.buffer_type, b.address, b.size FROM events e "
            "JOIN buffers b ON b.id = e.buffer WHERE e.kind IN ('alloc', 'free') ORDER BY e.seq")]


@pytest.fixture(scope="module")
def ops_session(tmp_path_factory):
    cwd = tmp_path_factory.mktemp("ops")
    proc, db = ttrecord_run(sys.executable, "ops_and_reads.py", cwd)
    assert proc.returncode == 0, describe(proc)
    return proc, db, marks("ops_and_reads.py")


def test_session_names_the_real_backend(ops_session):
    proc, db, _ = ops_session
    info = session(db)
    assert info["backend"] == "ttnn", info
    assert info["status"] == "ok" and info["exit_code"] == 0, info
    assert info["script"].endswith("ops_and_reads.py")
    # the script's own output passes through untouched
    assert "ADDRS 1048704 1050752 1052800 1054848" in proc.stdout, describe(proc)


def test_session_records_the_ttnn_version(ops_session):
    _, db, _ = ops_session
    # the release, then the wheel's build (platform tag, sfpi release)
    assert session(db)["ttnn_version"].startswith("0.81.1 (cp3"), session(db)["ttnn_version"]
    assert session(db)["ttnn_version"].endswith(", sfpi 7.89.0)"), session(db)["ttnn_version"]


def test_fast_operations_and_tensor_methods_are_intercepted_at_their_lines(ops_session):
    _, db, m = ops_session
    evs = events(db)

    def one_call(mark, kind, short):
        calls = [e for e in _calls_at(evs, m[mark]) if e["kind"] == kind]
        assert len(calls) == 1 and op_name_matches(calls[0]["name"], short), (
            f"line {m[mark]} ({mark}): want one {kind} {short!r}, got "
            f"{[(e['kind'], e['name']) for e in _calls_at(evs, m[mark])]}")
        return calls[0]

    # FastOperations, one of them imported with `from ttnn import multiply`
    for mark, short in [("add", "add"), ("multiply", "multiply"), ("softmax", "softmax"),
                        ("deallocate", "deallocate")]:
        e = one_call(mark, "op", short)
        assert e["phase"] == "eager" and e["status"] == "ok", e
        assert e["cs_file"].endswith("ops_and_reads.py") and e["cs_function"] == "<module>", e
    # ttnn.Tensor methods: a device->host read
    cpu = one_call("cpu", "d2h", "cpu")
    assert cpu["status"] == "ok" and cpu["phase"] == "eager", cpu
    opens = [e for e in evs if e["kind"] == "device_open"]
    closes = [e for e in evs if e["kind"] == "device_close"]
    assert len(opens) == 1 and len(closes) == 1, [(e["kind"], e["name"]) for e in evs]


def test_op_tensors_carry_the_real_allocators_addresses(ops_session):
    _, db, m = ops_session
    evs = events(db)

    def op(mark):
        return [e for e in _calls_at(evs, m[mark]) if e["kind"] == "op"][0]

    add, mul, smx = op("add"), op("multiply"), op("softmax")
    ins = tensors(db, add["seq"], "in")
    assert [t["address"] for t in ins] == [1048704, 1050752], ins
    out = tensors(db, add["seq"], "out")
    assert len(out) == 1, out
    assert (out[0]["address"], out[0]["buffer_type"], out[0]["size"], out[0]["storage"]) == (
        1052800, "DRAM", 2048, "device"), out[0]
    assert out[0]["shape"].replace(" ", "") == "[32,32]", out[0]
    # multiply's output reuses the address ttnn.deallocate(c) freed; softmax's comes next
    assert tensors(db, mul["seq"], "out")[0]["address"] == 1052800
    assert tensors(db, smx["seq"], "out")[0]["address"] == 1054848
    # every tensor names the buffer row that was live at its address
    for t in ins + out:
        assert t["buffer"] is not None, t


def test_buffers_are_distinct_while_live_and_reused_after_a_free(ops_session):
    _, db, _ = ops_session
    bufs = rows(db, "SELECT * FROM buffers ORDER BY alloc_seq")
    assert bufs and all(b["buffer_type"] == "DRAM" and b["size"] == 2048 for b in bufs), bufs
    for i, b in enumerate(bufs):
        for other in bufs[i + 1:]:
            if other["address"] == b["address"]:
                # the same address twice: the first was freed before the second was allocated
                assert b["free_seq"] is not None and b["free_seq"] <= other["alloc_seq"], (b, other)
    at = [b for b in bufs if b["address"] == 1052800]
    assert len(at) == 2, f"1052800: add's output, deallocated, then multiply's: {bufs}"
    dealloc = [e for e in events(db) if e["kind"] == "op" and op_name_matches(e["name"], "deallocate")][0]
    free = events(db, "e.seq = ?", (at[0]["free_seq"],))[0]
    assert free["kind"] == "free" and free["parent"] == dealloc["seq"], (free, dealloc)


def test_a_gc_free_then_same_size_allocation_is_recorded(ops_session):
    _, db, _ = ops_session
    at = rows(db, "SELECT * FROM buffers WHERE address = 1054848 ORDER BY alloc_seq")
    assert len(at) == 2, f"softmax's output (freed by gc) and f (64x64, same footprint): {at}"
    assert at[0]["free_seq"] is not None and at[0]["free_seq"] < at[1]["alloc_seq"]


def test_every_allocation_the_allocator_made_is_recorded(tmp_path):
    proc, db = ttrecord_run(sys.executable, "alloc_sequence.py", tmp_path)
    assert proc.returncode == 0, describe(proc)
    truth = [step[1] for step in seq_output(proc)["seq"]]
    recorded = [a for kind, _, a, _ in _alloc_free(db) if kind == "alloc"]
    assert recorded == truth


def test_read_inside_capture_is_recorded_with_the_real_tt_fatal(tmp_path):
    name = "read_in_capture.py"
    m = marks(name)
    proc, db = ttrecord_run(sys.executable, name, tmp_path)
    assert proc.returncode == 0, describe(proc)
    assert f"CAUGHT {READ_FATAL}" in proc.stdout, describe(proc)
    evs = events(db)
    reads = [e for e in _calls_at(evs, m["read"]) if e["kind"] == "d2h"]
    assert len(reads) == 1, [(e["kind"], e["name"], e["cs_line"]) for e in evs]
    r = reads[0]
    assert r["phase"] == "capture" and r["status"] == "raised" and r["trace"] is not None, r
    assert r["error"].startswith("RuntimeError: TT_FATAL @ ") or r["error"].startswith("TT_FATAL @ "), r["error"]
    assert f"info:\n{READ_FATAL}" in r["error"], r["error"]
    begins = [e for e in evs if e["kind"] == "trace_begin"]
    ends = [e for e in evs if e["kind"] == "trace_end"]
    assert [e["cs_line"] for e in begins] == [m["begin"]] and [e["cs_line"] for e in ends] == [m["end"]]
    assert begins[0]["seq"] < r["seq"] < ends[0]["seq"]
    assert session(db)["status"] == "ok"
    traces = rows(db, "SELECT * FROM traces")
    assert len(traces) == 1 and traces[0]["release_seq"] is not None and traces[0]["ops"] == 0, traces


def test_check_reports_tr001_at_the_read_line(tmp_path):
    name = "read_in_capture.py"
    m = marks(name)
    proc, db = ttrecord_run(sys.executable, name, tmp_path)
    assert proc.returncode == 0, describe(proc)
    chk = subprocess.run([sys.executable, "-m", "ttrecord", "check", "--format", "json", str(db)],
                         cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert chk.returncode == 1, describe(chk)  # an error-level hazard exists
    import json

    report = json.loads(chk.stdout)
    found = [(f["id"], f["line"], f["file"].rsplit("/", 1)[-1]) for f in report["findings"]]
    assert found == [("TR001", m["read"], name)], found
    f = report["findings"][0]
    assert f["severity"] == "error" and READ_FATAL in f["message"], f["message"][:300]
    assert "1048704" in f["evidence"]["buffer"], f["evidence"]


def test_uncaught_read_inside_capture_ends_the_session_with_the_tt_fatal(tmp_path):
    name = "read_in_capture_uncaught.py"
    m = marks(name)
    proc, db = ttrecord_run(sys.executable, name, tmp_path)
    assert proc.returncode != 0, describe(proc)
    assert READ_FATAL in proc.stderr, describe(proc)  # the user still sees the real error
    info = session(db)
    assert info["status"] == "error", info
    assert info["error_type"] == "RuntimeError", info
    assert READ_FATAL in (info["error_message"] or ""), info
    reads = [e for e in _calls_at(events(db), m["read"]) if e["kind"] == "d2h"]
    assert len(reads) == 1 and reads[0]["status"] == "raised" and reads[0]["phase"] == "capture", reads


def test_op_inside_capture_segfault_leaves_a_crashed_session_naming_the_op(tmp_path):
    name = "op_in_capture.py"
    m = marks(name)
    proc, db = ttrecord_run(sys.executable, name, tmp_path)
    assert proc.returncode != 0, describe(proc)
    assert "unreachable" not in proc.stdout
    assert db.exists(), describe(proc)
    info = session(db)
    assert info["status"] == "crashed", info
    assert info["signal"] == 11, info  # SIGSEGV inside ttnn
    assert info["last_call"] is not None, info
    last = events(db, "e.seq = ?", (info["last_call"],))[0]
    assert op_name_matches(last["name"], "add"), last
    assert last["cs_line"] == m["captured_add"] and last["cs_file"].endswith(name), last
    assert last["phase"] == "capture" and last["status"] == "died", last
    # everything before the crash is there, in order
    evs = events(db)
    kinds_lines = [(e["kind"], e["cs_line"]) for e in evs if e["kind"] in ("op", "trace_begin")]
    assert kinds_lines == [("op", m["eager_add"]), ("trace_begin", m["begin"]), ("op", m["captured_add"])]
    # the store's reader opens it too
    from ttrecord.store.reader import Session

    with Session.open(db) as s:
        assert str(s.info().status) == "crashed"
        assert s.last_call().seq == info["last_call"]


def test_recording_does_not_move_real_addresses(tmp_path):
    """The recorder holds no tensor references and allocates nothing on the device: the same
    script gives the same buffer_address() sequence with and without ttrecord."""
    bare = run_script(sys.executable, "alloc_sequence.py", tmp_path)
    assert bare.returncode == 0, describe(bare)
    proc, _ = ttrecord_run(sys.executable, "alloc_sequence.py", tmp_path)
    assert proc.returncode == 0, describe(proc)
    assert seq_output(proc) == seq_output(bare)


def test_emulator_and_real_sessions_record_the_same_allocations(tmp_path):
    """alloc_sequence.py under `ttrecord run` on both backends: the same addresses reach the
    script, and the sessions hold the same alloc/free events (type, address, bank-local size)."""
    proc_r, db_r = ttrecord_run(sys.executable, "alloc_sequence.py", tmp_path, db="real.db")
    assert proc_r.returncode == 0, describe(proc_r)
    proc_e, db_e = ttrecord_run(emulator_python(), "alloc_sequence.py", tmp_path,
                                backend="emulator", db="emu.db")
    assert proc_e.returncode == 0, describe(proc_e)
    assert session(db_e)["backend"] == "emulator"
    assert seq_output(proc_e)["seq"] == seq_output(proc_r)["seq"]
    real, emu = _alloc_free(db_r), _alloc_free(db_e)
    assert len(real) > 20, real
    assert emu == real, "\n".join(f"{'  ' if r == e else '!!'} real {r}  emulator {e}"
                                  for r, e in zip(real + [None] * len(emu), emu + [None] * len(real))
                                  if r is not None or e is not None)


def test_writes_and_sync_the_mock_accepts_are_still_found(tmp_path):
    """The mock device silently accepts host writes and syncs inside a capture (hardware aborts
    at the first); the recorder records each and `ttrecord check` reports all of them at once,
    plus the trace that was never released."""
    name = "transfers_in_capture.py"
    m = marks(name)
    proc, db = ttrecord_run(sys.executable, name, tmp_path)
    assert proc.returncode == 0, describe(proc)
    assert "DONE 1050752" in proc.stdout, describe(proc)
    evs = events(db)
    got = {(e["kind"], e["cs_line"]): e for e in evs if e["kind"] in ("h2d", "sync", "d2h")}
    for kind, mark in [("h2d", "copy_h2d"), ("h2d", "to_device"), ("sync", "sync")]:
        e = got.get((kind, m[mark]))
        assert e is not None, f"no {kind} at line {m[mark]} ({mark}): {sorted(got)}"
        assert e["phase"] == "capture" and e["status"] == "ok" and e["trace"] == 0, e
    assert got[("d2h", m["read_after"])]["phase"] == "eager"
    # end_trace_capture allocated the trace's buffer at the base of the trace region
    trace_bufs = rows(db, "SELECT * FROM buffers WHERE buffer_type = 'TRACE'")
    assert [(b["address"], b["size"]) for b in trace_bufs] == [(4278190080 - (1 << 20) // 8, 1024)], trace_bufs
    chk = subprocess.run([sys.executable, "-m", "ttrecord", "check", "--format", "json", str(db)],
                         cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert chk.returncode == 1, describe(chk)
    import json

    found = sorted((f["id"], f["line"]) for f in json.loads(chk.stdout)["findings"])
    assert found == sorted([("TR002", m["copy_h2d"]), ("TR002", m["to_device"]), ("TR003", m["sync"]),
                            ("TR009", m["begin"])]), found


def test_replay_verification_does_not_move_real_addresses(tmp_path):
    """`--verify-replay` holds the tensors made while a trace exists (nanobind objects here)
    and lets each go at the next call after the program drops it: the script sees the same
    buffer_address() sequence as without ttrecord, reused addresses included."""
    bare = run_script(sys.executable, "verify_holds.py", tmp_path)
    assert bare.returncode == 0, describe(bare)
    proc, db = ttrecord_run(sys.executable, "verify_holds.py", tmp_path, extra=("--verify-replay",))
    assert proc.returncode == 0, describe(proc)
    addresses = seq_output(bare)["seq"]
    assert seq_output(proc)["seq"] == addresses
    by_label = dict(addresses)
    assert by_label["c after del a"] == by_label["a after capture"]  # the drop really freed it
    assert rows(db, "SELECT count(*) AS n FROM events WHERE kind = 'verify'")[0]["n"] == 0


def test_frees_by_reference_drop_are_placed_between_the_calls_around_them(tmp_path):
    """GIVEN 1,000 live buffers on the real allocator, a tensor dropped between two ops, a
    buffer whose first tensor goes while a reshape view still holds it, and a sharded tensor
    WHEN recorded THEN the dropped buffer's FREE sits between the two ops, outside any call;
    the viewed buffer is freed only after the view goes; the sharded buffer's ALLOC has the
    real allocator's bank-local size (2 tiles of 2048 bytes per core)."""
    proc, db = ttrecord_run(sys.executable, "frees_by_drop.py", tmp_path)
    assert proc.returncode == 0, describe(proc)
    printed = seq_output(proc)
    mk = marks("frees_by_drop.py")
    evs = events(db)
    call_seq = {line: _calls_at(evs, line)[0]["seq"] for line in (mk["after_drop"], mk["view_alive"], mk["view_gone"])}
    frees = rows(db, "SELECT e.seq, e.parent, b.address FROM events e JOIN buffers b ON b.id = e.buffer"
                     " WHERE e.kind = 'free' ORDER BY e.seq")
    doomed = [e for e in frees if e["address"] == printed["doomed"] and e["seq"] < call_seq[mk["after_drop"]]]
    assert doomed and doomed[-1]["parent"] is None
    viewed = [e["seq"] for e in frees if e["address"] == printed["viewed"] and e["seq"] > call_seq[mk["after_drop"]]]
    assert viewed and call_seq[mk["view_alive"]] < viewed[0] < call_seq[mk["view_gone"]]
    sharded = list(rows(db, "SELECT b.size FROM events e JOIN buffers b ON b.id = e.buffer"
                                   " WHERE e.kind = 'alloc' AND b.buffer_type = 'L1' AND b.address = ?",
                               (printed["sharded"],)))
    assert sharded and sharded[0]["size"] == 4096

def test_a_double_free_is_recorded_once_and_the_mock_device_is_named(tmp_path):
    """GIVEN a tensor deallocated with force=True twice and then with ttnn.deallocate on the mock
    device THEN one buffer on the device, freed once, and no phantom buffer for the later calls;
    the session names the mock device as such."""
    proc, db = ttrecord_run(sys.executable, "double_free.py", tmp_path)
    assert proc.returncode == 0, describe(proc)
    buffers = rows(db, "SELECT device, free_seq FROM buffers WHERE buffer_type != 'TRACE'")
    assert len(buffers) == 1 and buffers[0]["device"] is not None, buffers
    assert buffers[0]["free_seq"] is not None
    assert len(rows(db, "SELECT seq FROM events WHERE kind = 'free' AND buffer IN"
                        " (SELECT id FROM buffers WHERE buffer_type != 'TRACE')")) == 1
    assert "mock device" in session(db)["backend_reason"]
