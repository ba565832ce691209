"""Every sample recorded under `ttrecord run --backend emulator` leaves a complete, consistent
session: the status its ending deserves, every `# expect:` line as a recorded call site,
tensor addresses that are allocator buffers live at the time, paired allocs/frees and traces."""

from __future__ import annotations

import re

import pytest

from tests.recorder.conftest import SAMPLES

pytestmark = pytest.mark.spawns

EXPECTED_STATUS = {
    "crash_in_replay": ("crashed", 139),
    "hang_in_replay": ("hung", 124),
    "python_error": ("error", 1),
    "readback_in_capture": ("error", 1),
    "host_write_in_capture": ("error", 1),
    "sync_in_capture": ("error", 1),
    "trace_region_too_small": ("error", 1),
    "compile_in_capture": ("error", 1),  # ttnn's "Cannot load new binaries during trace capture"
    "cache_cleared_before_capture": ("error", 1),  # the same, after a program-cache clear
    "creation_in_capture": ("error", 1),  # "Writes are not supported during trace capture"
    "dynamic_trace_region": ("error", 1),  # "Trace buffer at address ... overlaps with ..."
}
SAMPLE_NAMES = sorted(p.stem for p in SAMPLES.glob("*.py"))


@pytest.mark.parametrize("name", SAMPLE_NAMES)
def test_status_and_exit_code(samples, name):
    """GIVEN a sample WHEN recorded THEN the session status and ttrecord's exit code match
    how the program ends (ok for the rest), and the session is closed."""
    rec = samples[name]
    status, code = EXPECTED_STATUS.get(name, ("ok", 0))
    row = rec.session()
    assert (row["status"], rec.proc.returncode) == (status, code), rec.proc.stderr[-2000:]
    assert row["exit_code"] == code and row["ended_at"] is not None
    assert row["backend"] == "emulator" and row["backend_reason"]


@pytest.mark.parametrize("name", SAMPLE_NAMES)
def test_expect_lines_are_recorded_call_sites(samples, name):
    """GIVEN the `# expect:` markers of a sample WHEN recorded THEN each marked line is the
    call site of a top-level ttnn call in the sample's file."""
    path = SAMPLES / f"{name}.py"
    marked = [i for i, line in enumerate(path.read_text().splitlines(), 1) if "# expect: TR" in line]
    sites = {r["line"] for r in samples[name].rows(
        "SELECT c.line FROM events e JOIN callsites c ON c.id = e.callsite"
        " WHERE e.parent IS NULL AND c.file = ?", str(path))}  # fmt: skip
    assert not set(marked) - sites


@pytest.mark.parametrize("name", SAMPLE_NAMES)
def test_tensor_addresses_are_live_allocator_buffers(samples, name):
    """GIVEN a recorded sample WHEN reading each device tensor of each call THEN its address
    and size are those of an allocator buffer (from get_buffers) live at that call."""
    rec = samples[name]
    rows = rec.rows(
        "SELECT t.seq, t.address, t.size, b.address AS baddr, b.size AS bsize, b.alloc_seq,"
        " b.free_seq, (SELECT count(*) FROM events a WHERE a.kind = 'alloc' AND a.buffer = b.id)"
        " AS allocs FROM tensors t LEFT JOIN buffers b ON b.id = t.buffer"
        " JOIN events e ON e.seq = t.seq WHERE t.storage = 'device' AND t.address IS NOT NULL"
        " AND e.status = 'ok'"
    )
    for r in rows:
        assert (r["baddr"], r["bsize"]) == (r["address"], r["size"])
        assert r["allocs"] == 1, f"buffer at {r['address']} not seen allocated by get_buffers"
        assert r["free_seq"] is None or r["free_seq"] > r["seq"]


@pytest.mark.parametrize("name", SAMPLE_NAMES)
def test_allocs_and_frees_pair_up(samples, name):
    """GIVEN a recorded sample WHEN reading buffers THEN every free follows its alloc, no two
    live buffers of one type overlap, and every closed device freed everything."""
    rec = samples[name]
    for b in rec.rows("SELECT * FROM buffers WHERE free_seq IS NOT NULL"):
        assert b["free_seq"] > b["alloc_seq"]
    frees = rec.rows("SELECT e.seq, e.buffer FROM events e WHERE kind = 'free'")
    assert all(f["buffer"] is not None for f in frees)
    closed = rec.rows("SELECT close_seq FROM devices WHERE close_seq IS NOT NULL")
    if closed:
        assert not rec.rows("SELECT id FROM buffers WHERE free_seq IS NULL")


@pytest.mark.parametrize("name", SAMPLE_NAMES)
def test_trace_calls_carry_their_trace(samples, name):
    """GIVEN a recorded sample WHEN reading trace calls THEN begin/end/execute/release name a
    trace id, ops between begin and end are in phase capture with that id, and the traces
    table counts them."""
    rec = samples[name]
    for t in rec.rows("SELECT * FROM traces WHERE end_seq IS NOT NULL"):
        ops = rec.rows(
            "SELECT phase, trace FROM events WHERE kind = 'op' AND parent IS NULL"
            " AND seq > ? AND seq < ? AND device = ?", t["begin_seq"], t["end_seq"], t["device"])
        assert {(o["phase"], o["trace"]) for o in ops} <= {("capture", t["trace_id"])}
        assert t["ops"] == len(ops)
    for e in rec.rows("SELECT * FROM events WHERE kind LIKE 'trace_%' AND status = 'ok'"):
        assert e["trace"] is not None


def test_clean_decode_has_every_phase(samples):
    """GIVEN the clean decode sample WHEN recorded THEN its calls are tagged eager, prep,
    capture and replay, and nothing raised."""
    rec = samples["clean_decode"]
    phases = {r["phase"] for r in rec.rows("SELECT DISTINCT phase FROM events")}
    assert phases == {"eager", "prep", "capture", "replay"}
    assert not rec.rows("SELECT seq FROM events WHERE status != 'ok'")


def test_readback_in_capture_stores_the_tt_fatal(samples):
    """GIVEN the readback-in-capture sample WHEN recorded THEN the d2h call in capture is
    stored as raised with ttnn's TT_FATAL text."""
    rows = samples["readback_in_capture"].rows(
        "SELECT * FROM events WHERE status = 'raised' AND parent IS NULL")
    assert [(r["kind"], r["phase"]) for r in rows] == [("d2h", "capture")]
    assert "Reads are not supported during trace capture." in rows[0]["error"]


def test_allocation_warning_is_a_child_event(samples):
    """GIVEN the alloc-after-capture sample WHEN recorded THEN ttnn's unsafe-allocation
    warning is a WARNING event whose parent is the allocating call at the marked line."""
    rec = samples["alloc_after_capture"]
    path = SAMPLES / "alloc_after_capture.py"
    line = next(i for i, text in enumerate(path.read_text().splitlines(), 1) if "# expect: TR004" in text)
    rows = rec.rows(
        "SELECT w.args, c.line FROM events w JOIN events p ON p.seq = w.parent"
        " JOIN callsites c ON c.id = p.callsite WHERE w.kind = 'warning'")
    assert line in {r["line"] for r in rows}
    assert all(re.search("potentially unsafe", r["args"]) for r in rows)


def test_threads_keep_their_thread_ids(samples):
    """GIVEN the two-thread sample WHEN recorded THEN each worker's ops carry its own thread
    id: two threads each ran 10 ops (5 x add + relu)."""
    rows = samples["threads"].rows(
        "SELECT thread, count(*) AS n FROM events WHERE kind = 'op' AND parent IS NULL"
        " GROUP BY thread")
    assert sorted(r["n"] for r in rows) == [10, 10]
