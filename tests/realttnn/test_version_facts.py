"""The running ttnn release agrees with ttrecord.ttnn_versions, whichever release the lane runs.

Every lane runs this file (`setup --ttnn X.Y.Z`): the facts table's entry for the running
release is checked against what the library does on the mock p150: its bindings, its
allocator's first addresses, the TT_FATAL a read in capture raises, the trace-region message an
empty capture raises when the region is too small, where the trace buffer lands, and the
version and build `ttrecord run` records.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import re
import subprocess
import sys
import textwrap

import pytest

from realttnn_helpers import describe, events, marks, op_name_matches, rows, session, tensors, ttrecord_run
from ttrecord import ttnn_versions as tv

RELEASE = importlib.metadata.version("ttnn") if importlib.util.find_spec("ttnn") else "0.0.0"

# The lane's probe prelude, with tensors made from a list where the release cannot read numpy
# without torch (0.66.0)
PRELUDE = textwrap.dedent("""\
    import json
    import numpy as np
    import ttnn

    def emit(**kw):
        print("RESULT " + json.dumps(kw), flush=True)

    def open_dev():
        return ttnn.open_device(device_id=0, trace_region_size=1 << 20)

    def mk(dev, shape=(32, 32), mem=None, dtype=None, layout=None):
        args = (dtype or ttnn.bfloat16, dev, layout or ttnn.TILE_LAYOUT, mem or ttnn.DRAM_MEMORY_CONFIG)
        try:
            return ttnn.Tensor(np.zeros(shape, dtype=np.float32), *args)
        except RuntimeError:
            return ttnn.Tensor([0.0] * (shape[0] * shape[1]), list(shape), args[0], args[2], dev, args[3])
""")


def _probe(run_py, code: str):
    return run_py(PRELUDE + textwrap.dedent(code), prelude=False)


def test_bindings_the_recorder_reads_exist(run_py):
    p = _probe(run_py, """
        from ttrecord import ttnn_versions as tv
        emit(found=tv.detect(ttnn))
    """)
    assert p.returncode == 0, p.describe()
    found = p.result["found"]
    for name in tv.BINDINGS:
        assert found[name], f"ttnn {RELEASE} lacks {tv.BINDINGS[name]}"
    for name, table in tv.OPTIONAL_BINDINGS.items():
        assert found[name] == tv.for_release(table, RELEASE), (name, found)
    assert found["tracker"] == (tv.for_release(tv.TRACKER, RELEASE) is not None), found


def test_allocator_first_addresses(run_py):
    want = tv.for_release(tv.ALLOCATOR_P150, RELEASE)
    assert want is not None
    p = _probe(run_py, """
        dev = open_dev()
        a = mk(dev); b = mk(dev); c = mk(dev, (64, 64)); l1 = mk(dev, mem=ttnn.L1_MEMORY_CONFIG)
        l1b = mk(dev, mem=ttnn.L1_MEMORY_CONFIG)
        infos = ttnn._ttnn.reports.get_buffers([dev])
        sizes = sorted({int(i.max_size_per_bank) for i in infos})
        emit(addrs=[t.buffer_address() for t in (a, b, c, l1, l1b)], sizes=sizes,
             entries=dev.num_program_cache_entries())
        ttnn.close_device(dev)
    """)
    assert p.returncode == 0, p.describe()
    r = p.result
    d, tile = want["first_dram"], want["tile_per_bank"]
    assert r["addrs"] == [d, d + tile, d + 2 * tile, want["first_l1"], want["first_l1"] - tile], r
    assert r["sizes"] == [tile], r  # bank-local footprints: one tile per bank
    assert r["entries"] == 0, r


def test_read_in_capture_raises_the_known_text(run_py):
    p = _probe(run_py, """
        dev = open_dev()
        t = mk(dev)
        tid = ttnn.begin_trace_capture(dev, cq_id=0)
        try:
            t.cpu()
            emit(error=None)
        except Exception as e:
            emit(error=str(e))
        ttnn.end_trace_capture(dev, tid, cq_id=0)
        ttnn.release_trace(dev, tid)
        ttnn.close_device(dev)
    """)
    assert p.returncode == 0, p.describe()
    error = p.result["error"]
    assert error and tv.for_release(tv.READ_IN_CAPTURE, RELEASE) in error, error
    assert tv.is_read_in_capture(error)


def test_trace_region_message_and_trace_buffer_placement(run_py):
    p = _probe(run_py, """
        out = {}
        for size in (1 << 20, 512):
            dev = ttnn.open_device(device_id=0, trace_region_size=size)
            tid = ttnn.begin_trace_capture(dev, cq_id=0)
            try:
                ttnn.end_trace_capture(dev, tid, cq_id=0)
                infos = ttnn._ttnn.reports.get_buffers([dev])
                out[size] = {"buffers": sorted([int(i.address), int(i.max_size_per_bank)] for i in infos)}
                ttnn.release_trace(dev, tid)
            except Exception as e:
                out[size] = {"error": str(e)}
            ttnn.close_device(dev)
        emit(out=out)
    """)
    assert p.returncode == 0, p.describe()
    out = p.result["out"]
    top, banks = 4278190080, 8
    per_bank = tv.trace_region_per_bank(1 << 20, banks, RELEASE)
    # the trace region is the top `per_bank` bytes of every DRAM bank; the trace buffer starts there
    assert out[str(1 << 20)]["buffers"] == [[top - per_bank, 1024]], out
    # an empty capture needs 1024 B per bank: 512 is too small under either meaning
    misfit = tv.parse_trace_region_too_small(out["512"].get("error", ""))
    assert misfit is not None and misfit.allocated == 512 and misfit.needed > 512, out


@pytest.fixture(scope="module")
def smoke(tmp_path_factory):
    cwd = tmp_path_factory.mktemp("smoke")
    proc, db = ttrecord_run(sys.executable, "version_smoke.py", cwd,
                            extra=("--audit-region", "version_smoke.step"))
    assert proc.returncode == 0, describe(proc)
    return proc, db, marks("version_smoke.py")


def test_recorded_session_names_release_and_build(smoke):
    _, db, _ = smoke
    recorded = session(db)["ttnn_version"]
    assert tv.release(recorded) == tv.release(RELEASE), recorded
    assert re.fullmatch(re.escape(RELEASE) + r" \(cp3\d+-cp3\d+-manylinux_\d+_\d+_x86_64(, sfpi [\d.]+)?\)",
                        recorded), recorded
    from ttrecord.native.supervisor import _ttnn_version  # `ttrecord run --native` names the same

    assert _ttnn_version() == recorded
    rep = subprocess.run([sys.executable, "-m", "ttrecord", "report", "--format", "json", str(db)],
                         capture_output=True, text=True, timeout=120)
    assert rep.returncode in (0, 1), rep.stderr
    backend = json.loads(rep.stdout)["backend"]
    assert backend["ttnn_release"] == RELEASE and backend["ttnn_build"] in recorded, backend
    text = subprocess.run([sys.executable, "-m", "ttrecord", "report", str(db)],
                          capture_output=True, text=True, timeout=120)
    assert recorded in text.stdout, text.stdout


def test_recorder_records_what_the_rules_read(smoke):
    proc, db, m = smoke
    kinds = {e["kind"] for e in events(db)}
    assert {"device_open", "op", "alloc", "free", "d2h", "trace_begin", "trace_end",
            "trace_release", "region_begin", "region_end", "device_close"} <= kinds, kinds
    printed = [int(x) for x in re.search(r"ADDRS (\d+) (\d+) (\d+)", proc.stdout).groups()]
    allocs = rows(db, "SELECT e.callsite, c.line, b.address, b.size, b.buffer_type FROM events e "
                      "JOIN buffers b ON b.id = e.buffer LEFT JOIN callsites c ON c.id = e.callsite "
                      "WHERE e.kind = 'alloc' ORDER BY e.seq")
    assert [r["address"] for r in allocs[:3]] == printed, allocs  # the allocator's own addresses
    add = [e for e in events(db) if e["kind"] == "op" and e["cs_line"] == m["add"]]
    assert len(add) == 1 and op_name_matches(add[0]["name"], "add"), add
    assert [t["address"] for t in tensors(db, add[0]["seq"], "in")] == [printed[0]] * 2
    dealloc = [e for e in events(db) if e["kind"] == "op" and e["cs_line"] == m["dealloc"]]
    assert len(dealloc) == 1, dealloc
    frees = [e for e in events(db) if e["kind"] == "free" and e["parent"] == dealloc[0]["seq"]]
    assert len(frees) == 1, frees  # the add's output, freed by ttnn.deallocate
    trace_buffers = [r for r in allocs if "TRACE" in str(r["buffer_type"]).upper()]
    assert trace_buffers, allocs  # end_trace_capture's trace buffer, from the allocator


def test_check_finds_the_read_in_capture_and_in_the_audit_region(smoke):
    _, db, m = smoke
    chk = subprocess.run([sys.executable, "-m", "ttrecord", "check", "--format", "json", str(db)],
                         capture_output=True, text=True, timeout=120)
    assert chk.returncode == 1, chk.stderr
    found = {(f["id"], f["line"]) for f in json.loads(chk.stdout)["findings"]}
    assert ("TR001", m["read"]) in found, found
    assert ("TR001", m["step_read"]) in found, found  # audit mode


@pytest.mark.parametrize("fact", ["READ_IN_CAPTURE", "TRACE_REGION_TOO_SMALL", "ALLOCATOR_P150",
                                  "UNSAFE_ALLOCATION_WARNING", "TRACKER"])
def test_every_fact_covers_the_running_release(fact):
    table = getattr(tv, fact)
    assert tv.release(RELEASE) >= min(tv.release(k) for k in table), (
        f"ttnn {RELEASE} is older than every entry of {fact}: measure it and add a row")


def test_computed_pages_match_the_library_where_it_tells(run_py):
    """0.66.0 has no page methods, so ttrecord computes pages from shape, layout and dtype; on a
    release that has them, the computation must give what the library says."""
    p = _probe(run_py, """
        from ttrecord import ttnn_versions as tv
        dev = open_dev()
        out = []
        for shape, dtype, layout in [((64, 96), ttnn.bfloat16, ttnn.TILE_LAYOUT),
                                     ((32, 32), ttnn.float32, ttnn.TILE_LAYOUT),
                                     ((32, 64), ttnn.bfloat16, ttnn.ROW_MAJOR_LAYOUT)]:
            t = mk(dev, shape, dtype=dtype, layout=layout)
            class Old:  # the same tensor seen as 0.66.0 shows it
                padded_shape, layout, dtype = t.padded_shape, t.layout, t.dtype
            asked = tv.tensor_pages(t) if hasattr(t, "buffer_num_pages") else None
            out.append([asked, tv.tensor_pages(Old())])
        emit(out=out)
        ttnn.close_device(dev)
    """)
    assert p.returncode == 0, p.describe()
    for asked, computed in p.result["out"]:
        if asked is not None:
            assert computed == asked, p.result


def test_tr016_reads_the_release_s_trace_region_message(tmp_path):
    """TR016 on the message the running release raises, recorded by `ttrecord run`."""
    proc, db = ttrecord_run(sys.executable, "version_trace_region.py", tmp_path)
    assert proc.returncode == 0 and "CAUGHT ['Creating trace buffers" in proc.stdout, describe(proc)
    chk = subprocess.run([sys.executable, "-m", "ttrecord", "check", "--format", "json", str(db)],
                         capture_output=True, text=True, timeout=120)
    findings = [f for f in json.loads(chk.stdout)["findings"] if f["id"] == "TR016"]
    assert [(f["severity"], f["line"]) for f in findings] == [
        ("error", marks("version_trace_region.py")["open"])], chk.stdout
