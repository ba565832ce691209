"""The native recorder end to end, without ttnn: a C++ program against a stand-in libtt_metal.

fake_tt_metal.cpp defines some of the hooked roles under their real mangled names (the read
refuses to run inside a capture, like tt-metal's TT_FATAL) and leaves the write role out;
fake_engine.cpp calls them from C++. `ttrecord run --native` must build the recorder for that
library, preload it, and turn its log into a session whose findings point at the engine's lines.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ENGINE_SRC = HERE / "fake_engine.cpp"

pytestmark = [pytest.mark.spawns,  # compiles and runs C++ programs
              pytest.mark.skipif(shutil.which("g++") is None or shutil.which("addr2line") is None,
                                 reason="no C++ compiler or binutils")]  # fmt: skip


def marks() -> dict[str, int]:
    out = {}
    for n, line in enumerate(ENGINE_SRC.read_text().splitlines(), start=1):
        m = re.search(r"//\s*MARK:(\w+)", line)
        if m:
            out[m.group(1)] = n
    return out


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("fake")
    lib = d / "libtt_metal.so"
    engine = d / "engine"
    for cmd in (["g++", "-std=c++20", "-O1", "-shared", "-fPIC", "-o", str(lib),
                 str(HERE / "fake_tt_metal.cpp")],
                ["g++", "-std=c++20", "-g", "-O0", "-o", str(engine), str(ENGINE_SRC),
                 f"-L{d}", "-l:libtt_metal.so", f"-Wl,-rpath,{d}"]):  # fmt: skip
        done = subprocess.run(cmd, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr[-2000:]
    return {"dir": d, "lib": lib, "engine": engine, "cache": d / "cache"}


def run(built: dict, cwd: Path, *args: str, extra=(), env=None) -> tuple[subprocess.CompletedProcess, Path]:
    db = cwd / "S.db"
    full = dict(os.environ, TTRECORD_TT_METAL_LIB=str(built["lib"]),
                XDG_CACHE_HOME=str(built["cache"]))  # fmt: skip
    full.update(env or {})
    proc = subprocess.run([sys.executable, "-m", "ttrecord", "run", "--native", *extra, "-o",
                           str(db), "--", str(built["engine"]), *args],
                          cwd=cwd, env=full, capture_output=True, text=True, timeout=120)  # fmt: skip
    return proc, db


def findings(db: Path) -> list[dict]:
    proc = subprocess.run([sys.executable, "-m", "ttrecord", "check", "--format", "json",
                           "--allow-incomplete", str(db)], capture_output=True, text=True)  # fmt: skip
    return json.loads(proc.stdout)["findings"]


def query(db: Path, sql: str) -> list[tuple]:
    conn = sqlite3.connect(db)
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


def test_caught_fatal_read_and_finish_in_capture_are_findings_at_the_cpp_lines(built, tmp_path):
    """GIVEN a C++ program that compiles, reads (catching the TT_FATAL) and finishes in a capture
    WHEN recorded with --native THEN TR001, TR003 and the compile's TR013 are at the engine's lines, the read's
    and each role the library lacks (the write) is one warning."""
    proc, db = run(built, tmp_path, "--catch")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "eager read: 42" in proc.stdout  # the hooked calls passed their arguments through
    assert "core read: 1008" in proc.stdout
    m = marks()
    got = {(f["id"], Path(f["file"]).name, f["line"]) for f in findings(db)}
    assert ("TR001", "fake_engine.cpp", m["read"]) in got, got
    assert ("TR003", "fake_engine.cpp", m["finish"]) in got, got
    # the second program compiled inside the capture (the warm one came from the cache)
    assert ("TR013", "fake_engine.cpp", m["op"]) in got, got
    compiles = query(db, "SELECT phase FROM events WHERE name = 'program_cache_miss' ORDER BY seq")
    assert compiles == [("eager",), ("capture",)], compiles
    tr001 = next(f for f in findings(db) if f["id"] == "TR001")
    assert "Reads are not supported during trace capture" in tr001["evidence"]["raised"]
    assert "backtrace" not in tr001["evidence"]["raised"]
    warnings = [json.loads(a) for (a,) in query(db, "SELECT args FROM events WHERE kind = 'warning'")]
    by_role = {w["role"]: w["message"] for w in warnings}
    assert len(by_role) == len(warnings)  # one warning per missing role
    assert "host-to-device writes not recorded" in by_role["WRITE_SHARD"]
    assert "write_shard_to_device" in by_role["WRITE_SHARD"]
    assert "READ_SHARD" not in by_role and "FINISH" not in by_role
    phases = query(db, "SELECT name, phase FROM events WHERE kind = 'd2h' ORDER BY seq")
    assert [p for _, p in phases] == ["eager", "eager", "capture"], phases
    assert phases[1][0] == "enqueue_read_shard_from_core"
    assert "writes on core addresses not recorded" in by_role["WRITE_CORE"]


def test_uncaught_fatal_leaves_the_session_naming_the_cpp_call(built, tmp_path):
    """GIVEN the same read left uncaught WHEN the program aborts THEN the session is crashed,
    keeps the calls before it, and its error and traceback name the read's C++ line."""
    proc, db = run(built, tmp_path)
    assert proc.returncode == 134, proc.stderr[-2000:]
    status, message, tb = query(db, "SELECT status, error_message, traceback FROM session")[0]
    assert status == "crashed"
    assert "Reads are not supported during trace capture" in message
    assert f"fake_engine.cpp:{marks()['read']}" in tb, tb
    kinds = [k for (k,) in query(db, "SELECT kind FROM events ORDER BY seq")]
    assert kinds[-5:] == ["op", "note", "trace_begin", "op", "d2h"], kinds  # note: the compile


def test_audit_capture_runs_the_region_eagerly_and_reports_it_in_one_run(built, tmp_path):
    """GIVEN the uncaught variant WHEN recorded with --audit-capture THEN begin/end/replay are
    not passed on, the read does not abort, and the region's read and finish are findings in
    region capture@fake_engine.cpp:<begin line>."""
    proc, db = run(built, tmp_path, extra=("--audit-capture",))
    assert proc.returncode == 0, proc.stderr[-2000:]
    m = marks()
    region = f"capture@fake_engine.cpp:{m['begin']}"
    fs = [f for f in findings(db) if f["id"] in ("TR001", "TR003")]
    assert {(f["id"], f["line"]) for f in fs} == {("TR001", m["read"]), ("TR003", m["finish"])}
    assert all(f["evidence"]["region"] == region for f in fs), fs
    notes = [n for (n,) in query(db, "SELECT name FROM events WHERE kind = 'note'")]
    assert any(n.startswith("replay_mesh_trace") for n in notes), notes
    assert not query(db, "SELECT seq FROM events WHERE kind IN ('trace_begin', 'trace_execute')")


def test_a_forked_child_records_into_its_own_log(built, tmp_path):
    """GIVEN a program that forks a child which reads too WHEN recorded THEN the parent's and the
    child's reads are all in the session (each process writes a log of its own, opened at its
    first record, so neither overwrites the other), each at its own line."""
    proc, db = run(built, tmp_path, "--fork")
    assert proc.returncode == 0, proc.stderr[-2000:]
    m = marks()
    reads = query(db, "SELECT e.seq, e.thread, c.line FROM events e JOIN callsites c"
                      " ON c.id = e.callsite WHERE e.kind = 'd2h' ORDER BY e.seq")
    assert len(reads) == 3, reads
    assert len({seq for seq, _, _ in reads}) == 3
    assert sorted(line for _, _, line in reads) == sorted([m["read"], m["read"], m["read"]])
    assert len({thread for _, thread, _ in reads}) == 2  # two processes
    assert not list(tmp_path.glob("S.db.native.*"))  # the logs are gone with the run


def test_the_program_does_not_outlive_a_killed_supervisor(built, tmp_path):
    """GIVEN a C++ program that sleeps WHEN its `ttrecord run` is killed THEN the program gets
    SIGTERM too (PR_SET_PDEATHSIG, asked by the preloaded recorder), as a Python child does,
    and `ttrecord recover` rebuilds the session with the native events."""
    import signal
    import time

    marker = tmp_path / "pid"
    script = tmp_path / "sleeper.sh"
    script.write_text(f"#!/bin/sh\necho $$ > {marker}\nexec {built['engine']} --sleep\n")
    script.chmod(0o755)
    env = dict(os.environ, TTRECORD_TT_METAL_LIB=str(built["lib"]),
               XDG_CACHE_HOME=str(built["cache"]))  # fmt: skip
    sup = subprocess.Popen([sys.executable, "-m", "ttrecord", "run", "--native", "-o",
                            str(tmp_path / "S.db"), "--", str(script)], env=env,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    deadline = time.monotonic() + 60
    while not marker.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(1.0)  # the engine is exec'd and sleeping
    pid = int(marker.read_text())
    sup.send_signal(signal.SIGKILL)
    sup.wait()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        # a zombie of an exited process is gone for our purpose
        stat = Path(f"/proc/{pid}/stat")
        if stat.exists() and stat.read_text().split(")")[-1].split()[0] == "Z":
            break
        time.sleep(0.05)
    else:
        os.kill(pid, signal.SIGKILL)
        raise AssertionError("the program outlived its supervisor")
    # `ttrecord recover` finishes the session from the logs, the native ones included
    done = subprocess.run([sys.executable, "-m", "ttrecord", "recover", str(tmp_path / "S.db")],
                          capture_output=True, text=True, env=env)  # fmt: skip
    assert done.returncode == 0, done.stderr
    reads = query(tmp_path / "S.db", "SELECT e.kind, c.line FROM events e JOIN callsites c"
                                     " ON c.id = e.callsite WHERE e.kind = 'd2h'")
    assert reads == [("d2h", marks()["read"])], reads
    assert not list(tmp_path.glob("S.db.native.*"))


def test_no_compiler_is_one_line_and_exit_125(built, tmp_path):
    """GIVEN no C++ compiler and no cached build WHEN --native runs THEN one line says why."""
    proc, _ = run(built, tmp_path, env={"CXX": "no-such-compiler",
                                        "XDG_CACHE_HOME": str(tmp_path / "empty")})  # fmt: skip
    assert proc.returncode == 125, proc.stderr
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "no C++ compiler" in lines[0], proc.stderr


def test_a_file_that_is_not_a_program_is_one_line(built, tmp_path):
    """GIVEN --native and a file that is neither executable nor a .py script THEN one line."""
    data = tmp_path / "weights.bin"
    data.write_bytes(b"\0" * 16)
    proc = subprocess.run([sys.executable, "-m", "ttrecord", "run", "--native", "-o",
                           str(tmp_path / "S.db"), "--", str(data)], capture_output=True, text=True,
                          env=dict(os.environ, TTRECORD_TT_METAL_LIB=str(built["lib"]),
                                   XDG_CACHE_HOME=str(built["cache"])))  # fmt: skip
    assert proc.returncode == 125, proc.stderr
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "not an executable program" in lines[0], proc.stderr
    assert not (tmp_path / "S.db").exists()


def test_doctor_names_the_missing_roles(built, tmp_path):
    """GIVEN the stand-in library WHEN `native doctor` checks it THEN the roles it lacks are
    named with what is then not recorded, and the exit status is 1."""
    proc = subprocess.run([sys.executable, "-m", "ttrecord", "native", "doctor", "--library",
                           str(built["lib"]), "--no-build", str(built["engine"])],
                          capture_output=True, text=True, env=dict(os.environ))  # fmt: skip
    assert proc.returncode == 1, proc.stdout + proc.stderr
    out = proc.stdout
    assert "ok       device-to-host reads: FDMeshCommandQueue::read_shard_from_device" in out
    assert "PROBLEM  host-to-device writes not recorded" in out
    assert "engine loads libtt_metal.so dynamically" in out
