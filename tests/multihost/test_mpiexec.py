"""Real MPI launches (MPICH's `mpiexec` from the test extras) of the multi-host sample: one
session per rank, and one merged check of the run's folder."""

from __future__ import annotations

import json
import os
import shutil
import socket
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "samples" / "multihost" / "decode.py"
BIN = Path(sys.executable).parent
MPIEXEC = shutil.which("mpiexec", path=str(BIN)) or shutil.which("mpiexec")
TTRECORD = [sys.executable, "-m", "ttrecord"]

pytestmark = [
    pytest.mark.spawns,  # each launch starts two recorded interpreters
    pytest.mark.skipif(MPIEXEC is None, reason="no mpiexec: `bash scripts/setup` installs MPICH's wheel"),
]


def _env() -> dict[str, str]:
    """The test's environment without a launcher's rank variables (pytest may run under one)."""
    drop = ("OMPI_", "PMI_", "PMIX_", "SLURM_", "MPI_LOCAL", "TT_MESH_", "TT_RUN_", "TTRECORD_RUN_ID")
    env = {k: v for k, v in os.environ.items() if not k.startswith(drop)}
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    return env


def launch(folder: Path, *args: str, ranks: int = 2) -> subprocess.CompletedProcess[str]:
    folder.mkdir(parents=True, exist_ok=True)
    cmd = [str(MPIEXEC), "-n", str(ranks), *TTRECORD, "run", "--backend", "emulator",
           "-o", f"{folder}/", str(SAMPLE), *args]
    return subprocess.run(cmd, cwd=folder, env=_env(), text=True, capture_output=True, timeout=300)


def ttrecord(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*TTRECORD, *args], env=_env(), text=True, capture_output=True,
                          timeout=300, cwd=ROOT)


def line_of(text: str) -> int:
    return next(n for n, line in enumerate(SAMPLE.read_text().splitlines(), 1) if text in line)


def stored_launch(path: Path) -> dict:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return json.loads(conn.execute("SELECT options FROM session").fetchone()[0])["launch"]
    finally:
        conn.close()


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    base = tmp_path_factory.mktemp("multihost")
    clean, diverge = base / "clean", base / "diverge"
    done = {"clean": launch(clean), "diverge": launch(diverge, "--diverge")}
    for name, proc in done.items():
        assert proc.returncode == 0, f"{name}: {proc.stderr}"
    return {"clean": clean, "diverge": diverge, "procs": done}


def test_two_ranks_write_two_sessions_named_and_marked_by_rank(runs):
    """GIVEN `mpiexec -n 2 ttrecord run -o DIR/` THEN DIR holds one session per rank, each named
    with its rank, the world size and the host, and each stores them with one shared run id."""
    files = sorted(runs["clean"].glob("*.db"), key=lambda f: f.name.split("-rank")[1])  # ranks may start in different seconds
    host = socket.gethostname().split(".")[0]
    assert [f.name.split("-rank")[1] for f in files] == [f"0of2-{host}.db", f"1of2-{host}.db"]
    stored = [stored_launch(f) for f in files]
    assert [(s["rank"], s["size"], s["host"], s["launcher"]) for s in stored] == [
        (0, 2, host, "mpich"), (1, 2, host, "mpich")]
    assert stored[0]["run_id"] == stored[1]["run_id"]
    assert stored_launch(next(runs["diverge"].glob("*.db")))["run_id"] != stored[0]["run_id"]
    assert f"ttrecord check {runs['clean']}" in runs["procs"]["clean"].stderr  # rank 0's hint


def test_clean_run_checks_clean_over_both_ranks(runs):
    proc = ttrecord("check", "-q", str(runs["clean"]), "--format", "json")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["findings"] == []
    assert [(r["rank"], r["status"], r["findings"]) for r in doc["ranks"]] == [(0, "ok", 0), (1, "ok", 0)]
    text = ttrecord("check", "-q", str(runs["clean"]))
    assert text.returncode == 0 and "rank 0 (" in text.stdout and "rank 1 (" in text.stdout


def test_rank_that_skips_a_collective_gives_exactly_the_cross_rank_finding(runs):
    """GIVEN rank 1 skipping the all_gather inside its capture WHEN the folder is checked THEN
    exactly one finding, TR019, an error (a collective follows), pinned to rank 1's first
    divergent op and naming rank 0's with its line; exit status 1."""
    proc = ttrecord("check", "-q", str(runs["diverge"]), "--format", "json")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    findings = json.loads(proc.stdout)["findings"]
    assert [(f["id"], f["severity"]) for f in findings] == [("TR019", "error")]
    f = findings[0]
    ev = f["evidence"]
    assert (Path(f["file"]).name, f["line"]) == ("decode.py", line_of("return ttnn.softmax"))
    assert ev["ranks"] == [f"rank 1 ({socket.gethostname().split('.')[0]})"]
    assert (ev["reference_op"]["op"], ev["reference_op"]["line"]) == (
        "all_gather", line_of("partial = ttnn.all_gather"))
    assert (ev["diverging_op"]["op"], ev["diverging_op"]["line"]) == ("softmax", line_of("return ttnn.softmax"))
    assert ev["kind"] == "missing_op" and ev["collectives_after"] == ["all_gather"]


def test_the_files_of_a_run_check_as_its_folder_does(runs):
    files = sorted(str(p) for p in runs["diverge"].glob("*.db"))
    proc = ttrecord("check", "-q", *files, "--format", "json")
    assert proc.returncode == 1
    assert [f["id"] for f in json.loads(proc.stdout)["findings"]] == ["TR019"]
    one = ttrecord("check", "-q", files[1], "--format", "json")  # one rank alone: nothing to compare
    assert one.returncode == 0 and json.loads(one.stdout)["findings"] == []


def test_report_of_the_folder_shows_each_rank_and_the_comparison(runs):
    proc = ttrecord("report", "-q", str(runs["diverge"]))
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert out.index("rank 0 (") < out.index("rank 1 (") < out.index("across ranks")
    assert "TR019" in out.split("across ranks")[1]
    doc = json.loads(ttrecord("report", "-q", str(runs["clean"]), "--format", "json").stdout)
    assert [d["rank"]["rank"] for d in doc["ranks"]] == [0, 1] and doc["across_ranks"] == []


def test_sessions_of_two_runs_are_not_merged(runs, tmp_path):
    mixed = tmp_path / "mixed"
    mixed.mkdir()
    shutil.copy(next(runs["clean"].glob("*rank0of2*")), mixed / "a.db")
    shutil.copy(next(runs["diverge"].glob("*rank1of2*")), mixed / "b.db")
    proc = ttrecord("check", "-q", str(mixed))
    assert proc.returncode == 2 and "2 different runs" in proc.stderr
    assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    same = tmp_path / "same"
    same.mkdir()
    shutil.copy(next(runs["clean"].glob("*rank0of2*")), same / "a.db")
    shutil.copy(next(runs["clean"].glob("*rank0of2*")), same / "b.db")
    proc = ttrecord("check", "-q", str(same))
    assert proc.returncode == 2 and "both rank 0" in proc.stderr


def test_merged_json_matches_the_published_schema(runs):
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((ROOT / "docs" / "check-json.schema.json").read_text())
    for name in ("clean", "diverge"):
        doc = json.loads(ttrecord("check", "-q", str(runs[name]), "--format", "json").stdout)
        jsonschema.validate(doc, schema)


def test_tui_of_the_folder_lists_both_ranks_and_says_they_diverge(runs):
    """GIVEN the diverging run's folder WHEN `ttrecord tui DIR` lists it THEN both rank files
    are listed and the note above them says TR019 for the run; the clean run's says they agree."""
    import asyncio

    sys.path.insert(0, str(ROOT / "tests" / "tui"))
    try:
        from tui_pilot import screen_text, settle
    finally:
        sys.path.pop(0)
    from ttrecord.tui.app import TtrecordApp

    async def listing(folder: Path) -> str:
        app = TtrecordApp([str(folder)])
        async with app.run_test(size=(220, 24)) as pilot:
            await settle(pilot, timeout=60)
            return screen_text(app)

    text = asyncio.run(listing(runs["diverge"]))
    assert "rank0of2" in text and "rank1of2" in text
    assert "error TR019 Ranks diverge" in text
    assert "their captures agree" in asyncio.run(listing(runs["clean"]))
