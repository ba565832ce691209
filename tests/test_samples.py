"""Every sample runs with plain python against the emulator and shows its documented effect.

Starting an interpreter that imports torch costs ~1.4 s of CPU, twenty times
over. So the samples run as forked children of one warm launcher subprocess that
has imported torch and numpy (nothing else): each child sets sys.argv, sys.path
and its stdout/stderr files and runs the script as `__main__`, exactly as
`python samples/x.py` would, including the exit status (1 for an uncaught
exception, -11 for SIGSEGV). One sample additionally runs as a genuinely plain
`python samples/clean_decode.py` subprocess to keep that path honest.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import NamedTuple, Optional

import pytest

from tests.sample_catalog import RUNS, WITHOUT_SAMPLE
from ttrecord.analysis.registry import rules

pytestmark = pytest.mark.spawns

SAMPLES_DIR = Path(__file__).resolve().parent.parent / "samples"
# A marker names a registered rule (not a range of ids: TR012 is not one unless its module is).
HAZARD_IDS = set(rules())

# sample -> the hazard ids its `# expect:` markers must name
EXPECTED_MARKERS = {
    "clean_decode.py": [],
    "tracer_class.py": [],
    "readback_in_capture.py": ["TR001"],
    "host_write_in_capture.py": ["TR002"],
    "creation_in_capture.py": ["TR002"],
    "trace_churn.py": ["TR017", "TR018"],
    "dynamic_trace_region.py": ["TR016"],
    "cache_cleared_before_capture.py": ["TR013"],
    "sync_in_capture.py": ["TR003"],
    "alloc_after_capture.py": ["TR004"],
    "alloc_after_capture_safe.py": [],
    "acknowledged_corruptible.py": ["TR004"],
    "reallocated_input.py": [],
    "input_reallocated_after_capture.py": ["TR014"],
    "multi_trace.py": ["TR010"],
    "stale_input.py": ["TR005"],
    "freed_input.py": ["TR005"],
    "baked_value.py": ["TR007"],
    "aliasing.py": ["TR006"],
    "host_op_in_capture.py": ["TR008", "TR008"],
    "trace_lifecycle.py": ["TR009", "TR009"],
    "overlapping_traces.py": ["TR010"],
    "trace_region_too_small.py": ["TR016"],
    "compile_in_capture.py": ["TR013"],
    "prep_differs.py": ["TR015"],
    "compile_after_capture.py": ["TR014"],
    "address_drift.py": [],
    "crash_in_replay.py": [],
    "hang_in_replay.py": [],
    "python_error.py": [],
    "threads.py": [],
    "sharded_cnn_executor.py": [],
    "mesh_paged_decode.py": [],
    "two_cq_overlapped_input.py": [],
    "two_cq_missing_wait.py": ["TR012"],
    "pipelined_io_read_event.py": ["TR012"],
    "nonblocking_read_before_sync.py": ["TR012"],
    "sharded_disjoint_cores.py": ["TR004"],
    "galaxy_alloc_after_capture.py": ["TR004"],
    "ccl_trace_1x8.py": [],
    "sub_device_load_in_capture.py": ["TR003"],
    "sub_device_execute_other_manager.py": ["TR009"],
    "semaphore_freed_after_capture.py": ["TR005"],
    "free_under_replay.py": ["TR012", "TR012"],
    "dynamic_traces_overlap.py": ["TR010"],
}

HANG_RUN, HANG_MARKER = "hang_in_replay", "replay 2"

# The warm launcher: reads one JSON request per line, forks a child per request,
# then reports each child's pid and finally each exit status as JSON lines.
LAUNCHER = r"""
import json, os, runpy, sys, traceback
import numpy, torch  # the expensive imports, shared by every child

def run_child(req):
    for fd, path in ((1, req["stdout"]), (2, req["stderr"])):
        os.dup2(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC), fd)
    sys.argv = list(req["argv"])
    sys.path[0] = os.path.dirname(os.path.abspath(sys.argv[0]))
    code = 0
    try:
        runpy.run_path(sys.argv[0], run_name="__main__")
    except SystemExit as exc:
        if exc.code is None:
            code = 0
        elif isinstance(exc.code, int):
            code = exc.code
        else:
            print(exc.code, file=sys.stderr)
            code = 1
    except BaseException:
        sys.excepthook(*sys.exc_info())
        code = 1
    import threading
    for t in threading.enumerate():
        if t is not threading.main_thread() and not t.daemon:
            t.join()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)

children = {}
for line in sys.stdin:
    req = json.loads(line)
    pid = os.fork()
    if pid == 0:
        run_child(req)
    children[pid] = req["name"]
    print(json.dumps({"name": req["name"], "pid": pid}), flush=True)
while children:
    pid, status = os.wait()
    code = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
    print(json.dumps({"name": children.pop(pid), "returncode": code}), flush=True)
"""


class Result(NamedTuple):
    returncode: Optional[int]  # for the hang: the SIGKILL the test sent
    stdout: str
    stderr: str


def _env() -> dict:
    env = dict(os.environ)
    env.pop("TTRECORD_EMULATOR_FAULT", None)
    env.pop("TTRECORD_EMULATOR_QUEUES", None)  # the default (eager) queue mode
    env["PYTHONUNBUFFERED"] = "1"
    return env


def _run_all(workdir: Path) -> dict[str, Result]:
    launcher = subprocess.Popen(
        [sys.executable, "-c", LAUNCHER],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=_env(),
        cwd=SAMPLES_DIR.parent,
    )
    for name, args in RUNS.items():
        request = {
            "name": name,
            "argv": [str(SAMPLES_DIR / args[0]), *args[1:]],
            "stdout": str(workdir / f"{name}.out"),
            "stderr": str(workdir / f"{name}.err"),
        }
        launcher.stdin.write(json.dumps(request) + "\n")
    launcher.stdin.close()
    pids, codes = {}, {}
    while len(pids) < len(RUNS):
        message = json.loads(launcher.stdout.readline())
        pids[message["name"]] = message["pid"]
    # The hang sample: once it has printed the marker, give it a moment, then kill it.
    hang_out = workdir / f"{HANG_RUN}.out"
    deadline = time.monotonic() + 90
    while HANG_MARKER not in (hang_out.read_text() if hang_out.exists() else "") and time.monotonic() < deadline:
        time.sleep(0.1)
    time.sleep(1.0)
    os.kill(pids[HANG_RUN], signal.SIGKILL)
    for line in launcher.stdout:
        message = json.loads(line)
        codes[message["name"]] = message["returncode"]
    launcher.wait(30)
    return {
        name: Result(codes.get(name), (workdir / f"{name}.out").read_text(), (workdir / f"{name}.err").read_text())
        for name in RUNS
    }


@pytest.fixture(scope="module")
def results() -> dict[str, Result]:
    with tempfile.TemporaryDirectory(prefix="ttrecord-samples-") as tmp:
        return _run_all(Path(tmp))


def _line(stdout: str, prefix: str) -> str:
    for line in stdout.splitlines():
        if line.startswith(prefix):
            return line[len(prefix) :].strip()
    raise AssertionError(f"no line starting with {prefix!r} in:\n{stdout}")


def _ok(result: Result) -> None:
    assert result.returncode == 0, result.stderr


# --- the samples' documentation ------------------------------------------------------


def test_every_sample_is_listed_and_run():
    """GIVEN the samples folder THEN every script has expected markers and is run by this module."""
    on_disk = {p.name for p in SAMPLES_DIR.glob("*.py")}
    assert on_disk == set(EXPECTED_MARKERS)
    assert {args[0] for args in RUNS.values()} == on_disk


@pytest.mark.parametrize("name", sorted(EXPECTED_MARKERS))
def test_sample_has_docstring_fallback_import_and_exact_markers(name):
    """Each sample documents itself, falls back to the emulator, and marks exactly its hazard lines."""
    source = (SAMPLES_DIR / name).read_text()
    assert source.startswith('"""'), "docstring first"
    assert "except ImportError:  # no ttnn installed: use ttrecord's hardware-free emulator" in source
    assert "from ttrecord import emulator as ttnn" in source
    markers = re.findall(r"# expect: (TR\d{3})\b", source)
    assert sorted(markers) == sorted(EXPECTED_MARKERS[name])
    assert set(markers) <= HAZARD_IDS


def test_every_rule_has_a_sample_that_shows_it():
    """GIVEN the registry THEN each rule (but one no sample can show alone) is marked in a
    sample, so `check`'s end-to-end marker test covers it."""
    marked = {rule for names in EXPECTED_MARKERS.values() for rule in names}
    assert marked | WITHOUT_SAMPLE == HAZARD_IDS


# --- zero-hazard samples ---------------------------------------------------------------


def test_clean_decode_traced_tokens_equal_eager(results):
    r = results["clean_decode"]
    _ok(r)
    assert _line(r.stdout, "traced == eager:") == "True"
    assert "potentially unsafe" not in r.stderr


def test_tracer_class_traced_equals_eager(results):
    r = results["tracer_class"]
    _ok(r)
    assert _line(r.stdout, "traced == eager for 3 inputs:") == "True"
    assert "potentially unsafe" not in r.stderr


def test_sharded_cnn_executor_traced_equals_eager(results):
    r = results["sharded_cnn_executor"]
    _ok(r)
    assert _line(r.stdout, "traced == eager for 3 inputs:") == "True"


def test_mesh_paged_decode_traced_tokens_equal_eager(results):
    r = results["mesh_paged_decode"]
    _ok(r)
    assert _line(r.stdout, "traced == eager:") == "True"
    assert _line(r.stdout, "traced tokens (first 4 users):") == _line(r.stdout, "eager tokens (first 4 users):")


def test_ccl_trace_1x8_every_replay_gathers_every_chip(results):
    r = results["ccl_trace_1x8"]
    _ok(r)
    assert r.stdout.count("gathered equals every chip's shard: True") == 3


def test_sub_device_samples_end_in_ttnn_s_messages(results):
    load = results["sub_device_load_in_capture"]
    _ok(load)
    assert "Cannot reset worker state during trace capture" in load.stdout
    other = results["sub_device_execute_other_manager"]
    _ok(other)
    assert "Trace instance 0 must exist on Mesh device 0's active sub-device manager 0" in other.stdout


def test_alloc_after_capture_safe_values_survive(results):
    r = results["alloc_after_capture_safe"]
    _ok(r)
    assert _line(r.stdout, "intact:") == "True"


def test_reallocated_input_gets_the_captured_address_back(results):
    r = results["reallocated_input"]
    _ok(r)
    assert _line(r.stdout, "input at the captured address:") == "True"
    assert _line(r.stdout, "traced == eager:") == "True"
    assert "potentially unsafe" not in r.stderr  # allocated inside the capture: no warning


def test_threads_both_workers_match_torch(results):
    r = results["threads"]
    _ok(r)
    assert _line(r.stdout, "worker-0 matches torch:") == "True"
    assert _line(r.stdout, "worker-1 matches torch:") == "True"


# --- TT_FATAL samples ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "name,text",
    [
        ("readback_in_capture", "Reads are not supported during trace capture."),
        ("host_write_in_capture", "Writes are not supported during trace capture. trace id: 0"),
        ("creation_in_capture", "Writes are not supported during trace capture. trace id: 0"),
        ("dynamic_trace_region", "overlaps with DRAM activity during trace capture."),
        ("sync_in_capture", "Event Synchronization is not supported during trace capture."),
    ],
)
def test_capture_violations_end_in_the_real_tt_fatal(results, name, text):
    """The sample dies with a RuntimeError carrying real ttnn's TT_FATAL text."""
    r = results[name]
    assert r.returncode == 1
    assert "RuntimeError: TT_FATAL @ " in r.stderr
    assert text in r.stderr


# --- silent corruption samples -----------------------------------------------------------


def test_alloc_after_capture_value_differs_from_eager(results):
    r = results["alloc_after_capture"]
    _ok(r)
    eager = float(_line(r.stdout, "bias eager value:"))
    replay = float(_line(r.stdout, "bias after replay:"))
    assert eager == 1.0 and replay != eager
    assert "Allocating device buffers is potentially unsafe due to the existence of an active trace" in r.stderr


def test_sharded_tensor_on_other_cores_keeps_its_values_across_the_replay(results):
    # GIVEN a tensor sharded over row 1's cores at the L1 address of an intermediate the trace
    # writes on row 0's cores THEN the replay leaves it alone; on row 0's cores it overwrites it
    disjoint, same = results["sharded_disjoint_cores"], results["sharded_same_cores"]
    _ok(disjoint)
    _ok(same)
    assert _line(disjoint.stdout, "other:") == _line(same.stdout, "other:").replace("row 0", "row 1")
    assert _line(disjoint.stdout, "corrupted:") == "False"
    assert _line(same.stdout, "corrupted:") == "True"


def test_galaxy_allocation_after_capture_is_overwritten_on_every_chip(results):
    r = results["galaxy_alloc_after_capture"]
    _ok(r)
    assert _line(r.stdout, "chips corrupted:") == "32 of 32"


def test_acknowledged_corruptible_scratch_is_overwritten_and_the_output_is_right(results):
    # the acknowledged buffer is corrupted by the replay, as acknowledged; the trace's output is
    # (3 + 5) * 0.5
    r = results["acknowledged_corruptible"]
    _ok(r)
    assert float(_line(r.stdout, "scratch before replay:")) == 1.0
    assert float(_line(r.stdout, "scratch after replay:")) == 8.0
    assert float(_line(r.stdout, "output:")) == 4.0


def test_stale_input_replays_the_old_input(results):
    r = results["stale_input"]
    _ok(r)
    assert "input 3.0: replay gives 2.0, expected 6.0" in r.stdout
    assert _line(r.stdout, "stale output:") == "True"


def test_freed_input_feeds_garbage(results):
    r = results["freed_input"]
    _ok(r)
    assert float(_line(r.stdout, "replay with the captured input:")) == 11.0
    assert float(_line(r.stdout, "replay after the input was freed:")) == -90.0


def test_baked_value_replay_uses_the_captured_scalar(results):
    r = results["baked_value"]
    _ok(r)
    assert "replay temperature 8.0: 0.25 (expected 0.125)" in r.stdout


def test_aliasing_all_handles_read_the_last_replay(results):
    r = results["aliasing"]
    _ok(r)
    assert _line(r.stdout, "read:") == "[102.0, 102.0, 102.0]"


def test_host_op_in_capture_never_reruns_on_replay(results):
    r = results["host_op_in_capture"]
    _ok(r)
    assert _line(r.stdout, "host work ran:") == "2 time(s) (prep run + capture), 0 during replays"


def test_trace_lifecycle_catches_replay_of_released_trace(results):
    r = results["trace_lifecycle"]
    _ok(r)
    assert "must exist on Mesh device" in r.stdout
    assert "left unreleased" in r.stdout


def test_overlapping_traces_second_output_destroyed(results):
    r = results["overlapping_traces"]
    _ok(r)
    assert float(_line(r.stdout, "trace B output after B's replay:").split()[0]) == 2.0
    assert _line(r.stdout, "overwritten by the other trace:") == "True"


def test_trace_region_too_small_fails_at_the_second_capture(results):
    r = results["trace_region_too_small"]
    assert r.returncode == 1
    assert ("Creating trace buffers of size 36864B on MeshDevice 1, but only 32768B is allocated"
            " for trace region.") in r.stderr  # fmt: skip


@pytest.mark.parametrize("name", ["compile_in_capture", "cache_cleared_before_capture"])
def test_compile_in_capture_aborts_with_the_real_tt_fatal(results, name):
    """The first op that compiles inside the capture is refused as ttnn 0.81.1 refuses it (also
    when the warm-up compiled it and the program cache was cleared before the capture)."""
    r = results[name]
    assert r.returncode == 1
    assert ("TT_FATAL @ /project/tt_metal/distributed/mesh_workload.cpp:200: !is_capturing_trace\ninfo:\n"
            "Cannot load new binaries during trace capture.This program is not yet in program cache.") in r.stderr
    assert "replay:" not in r.stdout


def test_compile_after_capture_decode_replay_differs_from_eager(results):
    """Decode's binaries, compiled after the prefill capture, lie on the prefill trace's freed
    intermediate: the prefill replay overwrites them and the decode replay writes garbage (the
    bytes of prefill's 3.0 tiles, 0x40, read as 64) instead of relu(1.5)."""
    r = results["compile_after_capture"]
    _ok(r)
    assert _line(r.stdout, "decode replay:") == "64.0 (eager: 1.5)"
    assert _line(r.stdout, "replay == eager:") == "False"
    assert "Allocating device buffers is potentially unsafe due to the existence of an active trace" in r.stderr


def test_prep_differs_replays_right(results):
    """Another path in the prep run is a warm-up hazard, not a corruption on the emulator."""
    r = results["prep_differs"]
    _ok(r)
    assert _line(r.stdout, "replay:").split()[0] == "6.0"


def test_address_drift_only_with_the_extra_allocation(results):
    plain, extra = results["address_drift"], results["address_drift_extra"]
    _ok(plain)
    _ok(extra)
    assert _line(plain.stdout, "drifted:") == "False"
    assert _line(extra.stdout, "drifted:") == "True"


# --- crash, hang, plain error -------------------------------------------------------------


def test_crash_in_replay_dies_by_sigsegv_in_the_second_replay(results):
    r = results["crash_in_replay"]
    assert r.returncode == -signal.SIGSEGV
    assert r.stdout.splitlines()[-1] == "replay 2"


def test_hang_in_replay_hangs_in_the_second_replay(results):
    """The sample is still inside replay 2 when the test kills it."""
    r = results["hang_in_replay"]
    assert r.returncode == -signal.SIGKILL, "still running when killed"
    assert r.stdout.splitlines()[-1] == "replay 2"


def test_clean_decode_as_a_plain_python_subprocess():
    """GIVEN no ttnn installed WHEN `python samples/clean_decode.py` runs THEN it uses the emulator and succeeds."""
    proc = subprocess.run(
        [sys.executable, str(SAMPLES_DIR / "clean_decode.py")],
        capture_output=True,
        text=True,
        timeout=120,
        env=_env(),
    )
    assert proc.returncode == 0, proc.stderr
    assert "traced == eager: True" in proc.stdout


def test_python_error_exits_1_with_the_exception(results):
    r = results["python_error"]
    assert r.returncode == 1
    assert "ValueError: expected 128 logits, got 96" in r.stderr


def test_trace_churn_serves_right_outputs_while_recapturing(results):
    """Churn is a performance hazard only: the recaptured prefill trace still computes relu(x @ I)."""
    r = results["trace_churn"]
    _ok(r)
    assert _line(r.stdout, "prefill:") == "1.0"
