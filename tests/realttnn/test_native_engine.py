"""`ttrecord run --native` on a C++ engine built against the ttnn 0.81.1 wheel's libraries.

The engine (native/engine.cpp) opens a mock p150 through ttnn's C++ API, creates mesh
buffers, writes and reads them with MeshCommandQueue's enqueue_write/read_mesh_buffer (what
EnqueueWrite/ReadMeshBuffer call), and captures a decode step (write the token, read the
logits) with BeginTraceCapture/end_mesh_trace. Real tt-metal aborts the read inside the
capture with a TT_FATAL; the session must still name it at its C++ line with the callers,
and --audit-capture must give every read, write and sync of the region in one run.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from realttnn_helpers import describe, events, rows, session

HERE = Path(__file__).resolve().parent
ENGINE = HERE / "native" / "engine.cpp"

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="no C++ compiler (g++)")


def mark_lines() -> dict[str, int]:
    out = {}
    for n, line in enumerate(ENGINE.read_text().splitlines(), start=1):
        m = re.search(r"//\s*MARK:(\w+)", line)
        if m:
            out[m.group(1)] = n
    return out


@pytest.fixture(scope="module")
def engine(tmp_path_factory) -> Path:
    """The engine linked against the wheel's libraries (no headers: it declares what it calls)."""
    site = Path(os.environ.get("RTTNN_SITE_PACKAGES", ""))
    lib, libs = site / "ttnn" / "build" / "lib", site / "ttnn.libs"
    if not (lib / "libtt_metal.so").is_file():
        pytest.skip(f"no ttnn wheel libraries under {site}")
    out = tmp_path_factory.mktemp("engine") / "engine"
    cmd = ["g++", "-std=c++20", "-g", "-O0", "-o", str(out), str(ENGINE), f"-L{lib}",
           "-l:_ttnncpp.so", "-l:libtt_metal.so", f"-Wl,-rpath,{lib}", f"-Wl,-rpath,{libs}"]
    done = subprocess.run(cmd, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    return out


def record(engine: Path, cwd: Path, *args: str, extra=(), db="S.db") -> tuple[subprocess.CompletedProcess, Path]:
    out = cwd / db
    proc = subprocess.run([sys.executable, "-m", "ttrecord", "run", "--native", *extra, "-o",
                           str(out), "--", str(engine), *args],
                          cwd=cwd, capture_output=True, text=True, timeout=300)
    return proc, out


def check_json(db: Path, cwd: Path) -> list[dict]:
    proc = subprocess.run([sys.executable, "-m", "ttrecord", "check", "--format", "json",
                           "--allow-incomplete", str(db)],
                          cwd=cwd, capture_output=True, text=True, timeout=120)
    return json.loads(proc.stdout)["findings"]


def test_read_inside_capture_is_tr001_at_the_cpp_line_and_the_fatal_names_it(engine, tmp_path):
    """Rule: the readback real tt-metal aborts is TR001 at the engine's line, with its callers;
    the crashed session keeps everything before it and names the TT_FATAL."""
    proc, db = record(engine, tmp_path, "--read-in-capture")
    lines = mark_lines()
    assert proc.returncode == 134, describe(proc)  # SIGABRT from the uncaught TT_FATAL
    s = session(db)
    assert s["status"] == "crashed", s
    assert "Reads are not supported during trace capture" in (s["error_message"] or "")
    assert f"engine.cpp:{lines['read']}" in (s["traceback"] or ""), s["traceback"]
    findings = check_json(db, tmp_path)
    tr001 = [f for f in findings if f["id"] == "TR001"]
    assert len(tr001) == 1, findings
    f = tr001[0]
    assert f["file"].endswith("engine.cpp") and f["line"] == lines["read"], f
    assert "enqueue_read_mesh_buffer" in f["message"]
    assert "Reads are not supported during trace capture" in f["evidence"]["raised"]
    callers = [(Path(file).name, line) for file, line, _function in f["callers"]]
    assert ("engine.cpp", lines["step_read"]) in callers, f["callers"]
    assert ("engine.cpp", lines["captured_step"]) in callers, f["callers"]
    # everything before the crash is there: the eager writes and read, the buffers, the begin
    kinds = [e["kind"] for e in events(db)]
    assert kinds.count("alloc") >= 3 and "trace_begin" in kinds, kinds
    eager_reads = events(db, "e.kind = 'd2h' AND e.phase = 'eager'")
    assert len(eager_reads) == 1 and eager_reads[0]["cs_line"] == lines["read"]


def test_audit_capture_reports_every_blocker_of_the_region_in_one_run(engine, tmp_path):
    """Rule: with --audit-capture the capture is virtual, so the read does not abort, and the
    region's read, write and sync are each one finding at their line, in one run."""
    proc, db = record(engine, tmp_path, "--read-in-capture", "--sync-in-capture", "--steps", "3",
                      extra=("--audit-capture",))
    lines = mark_lines()
    assert proc.returncode == 0, describe(proc)
    assert "TT_FATAL" not in proc.stderr
    assert session(db)["status"] == "ok"
    findings = check_json(db, tmp_path)
    got = {(f["id"], Path(f["file"]).name, f["line"]) for f in findings}
    assert ("TR001", "engine.cpp", lines["read"]) in got, got
    assert ("TR002", "engine.cpp", lines["write"]) in got, got
    assert ("TR003", "engine.cpp", lines["sync"]) in got, got
    region = f"capture@engine.cpp:{lines['begin']}"
    for f in findings:
        if f["id"] in ("TR001", "TR002", "TR003"):
            assert f["evidence"]["region"] == region, f
    # the warm-up read and write outside the region are not findings
    assert len([f for f in findings if f["id"] == "TR001"]) == 1
    assert len(events(db, "e.kind = 'region_begin'")) == 1


def test_clean_capture_has_no_transfer_findings(engine, tmp_path):
    """Rule: a capture holding only the write (which the mock lets through) gives TR002 and no
    TR001; the run ends normally with the capture and release recorded."""
    proc, db = record(engine, tmp_path)
    assert proc.returncode == 0, describe(proc)
    ids = {f["id"] for f in check_json(db, tmp_path)}
    assert "TR001" not in ids and "TR002" in ids, ids
    kinds = {e["kind"] for e in events(db)}
    assert {"trace_begin", "trace_end", "trace_release", "alloc", "free"} <= kinds, kinds


def test_allocations_are_read_from_the_buffers_as_the_allocator_placed_them(engine, tmp_path):
    """Rule: the engine's three DRAM mesh buffers (4, 8 and 4 KiB in 2 KiB pages over 8 banks:
    one page per bank each) are allocated side by side, 2 KiB apart per bank, and freed when the
    engine drops them; the trace buffer is made at the end of the capture and freed by its
    release."""
    proc, db = record(engine, tmp_path)
    assert proc.returncode == 0, describe(proc)
    bufs = rows(db, "SELECT b.*, a.parent AS alloc_parent, f.parent AS free_parent FROM buffers b"
                    " JOIN events a ON a.seq = b.alloc_seq LEFT JOIN events f ON f.seq = b.free_seq"
                    " ORDER BY b.alloc_seq")
    dram = [b for b in bufs if b["buffer_type"] == "DRAM"]
    assert len(dram) == 3, bufs
    assert [b["size"] for b in dram] == [2048, 2048, 2048]
    assert [b["address"] - dram[0]["address"] for b in dram] == [0, 2048, 4096]
    assert all(b["free_seq"] is not None for b in dram)
    trace = [b for b in bufs if b["buffer_type"] == "TRACE"]
    assert len(trace) == 1, bufs
    by_seq = {e["seq"]: e["kind"] for e in events(db)}
    assert by_seq[trace[0]["alloc_parent"]] == "trace_end"
    assert by_seq[trace[0]["free_parent"]] == "trace_release"


def test_doctor_finds_every_role_in_the_wheel_and_the_engine_interposable(engine, tmp_path):
    """Rule: on ttnn 0.81.1 every role is hooked, libtt_metal.so is interposable and the engine
    loads it dynamically: the doctor exits 0."""
    proc = subprocess.run([sys.executable, "-m", "ttrecord", "native", "doctor", str(engine)],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "PROBLEM" not in proc.stdout
    assert "ok       device-to-host reads: FDMeshCommandQueue::read_shard_from_device" in proc.stdout
    assert "libtt_metal.so is interposable" in proc.stdout
    assert "engine loads _ttnncpp.so, libtt_metal.so dynamically" in proc.stdout
