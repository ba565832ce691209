"""The sessions of a run's ranks, recorded with a launcher's variables set by hand (no MPI):
per-rank findings labelled with their rank, merged formats, and the inputs that cannot merge."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TTRECORD = [sys.executable, "-m", "ttrecord"]
pytestmark = pytest.mark.slow  # each rank is a recorded interpreter


def _env(**extra: str) -> dict[str, str]:
    drop = ("OMPI_", "PMI_", "PMIX_", "SLURM_", "MPI_LOCAL", "TT_MESH_", "TT_RUN_", "TTRECORD_RUN_ID")
    env = {k: v for k, v in os.environ.items() if not k.startswith(drop)}
    env.update(extra)
    return env


def ttrecord(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*TTRECORD, *args], env=_env(**env), text=True, capture_output=True,
                          timeout=300, cwd=ROOT)


def record_rank(folder: Path, rank: int, sample: str, run_id: str = "run-a") -> None:
    proc = ttrecord("run", "-q", "--backend", "emulator", "-o", f"{folder}/", f"samples/{sample}",
                    SLURM_PROCID=str(rank), SLURM_NTASKS="2", TTRECORD_RUN_ID=run_id)
    assert proc.returncode in (0, 1), proc.stderr  # the sample may raise ttnn's TT_FATAL


@pytest.fixture(scope="module")
def readback_run(tmp_path_factory):
    folder = tmp_path_factory.mktemp("readback")
    for rank in (0, 1):
        record_rank(folder, rank, "readback_in_capture.py")
    return folder


def test_each_ranks_finding_is_labelled_and_identical_ranks_do_not_diverge(readback_run):
    """GIVEN both ranks reading back inside their capture (TR001 each) WHEN the folder is
    checked THEN two TR001 findings, titled with rank 0 and rank 1, and no TR019."""
    proc = ttrecord("check", "-q", "--allow-incomplete", str(readback_run), "--format", "json")
    assert proc.returncode == 1, proc.stderr
    doc = json.loads(proc.stdout)
    titles = sorted(f["title"] for f in doc["findings"])
    assert [t.split(":")[0] for t in titles] == [f"rank 0 ({doc['ranks'][0]['host']})",
                                                 f"rank 1 ({doc['ranks'][1]['host']})"]
    assert {f["id"] for f in doc["findings"]} == {"TR001"}
    assert [r["launcher"] for r in doc["ranks"]] == ["slurm", "slurm"]
    assert {r["run_id"] for r in doc["ranks"]} == {"run-a"}


def test_sarif_of_a_run_lists_every_ranks_results(readback_run):
    proc = ttrecord("check", "-q", "--allow-incomplete", str(readback_run), "--format", "sarif")
    assert proc.returncode == 1
    results = json.loads(proc.stdout)["runs"][0]["results"]
    assert sorted(r["ruleId"] for r in results) == ["TR001", "TR001"]


def test_a_session_without_launcher_among_ranks_is_refused(readback_run, tmp_path):
    single = tmp_path / "single.db"
    proc = ttrecord("run", "-q", "--backend", "emulator", "-o", str(single), "samples/clean_decode.py")
    assert proc.returncode == 0, proc.stderr
    ranks = sorted(str(p) for p in readback_run.glob("*.db"))
    out = ttrecord("check", "-q", ranks[0], str(single))
    assert out.returncode == 2 and "not recorded under a launcher" in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1
    # the single session alone, given as its folder, is checked as before
    alone = ttrecord("check", "-q", str(tmp_path), "--format", "json")
    assert alone.returncode == 0 and "ranks" not in json.loads(alone.stdout)


@pytest.mark.parametrize("args, message", [
    (["check", "missing.db", "other.db"], "missing.db: no such file or folder"),
    (["report", "missing.db", "other.db"], "missing.db: no such file or folder"),
    (["run", "-o", "samples/", "samples/clean_decode.py"], "samples/ is a folder; give a session file"),
])
def test_bad_inputs_say_so_in_one_line(args, message):
    proc = ttrecord(*args)
    assert proc.returncode in (2, 125), proc.stderr
    assert message in proc.stderr and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_an_empty_folder_is_an_error(tmp_path):
    proc = ttrecord("check", str(tmp_path), str(tmp_path))
    assert proc.returncode == 2 and "no ttrecord session in this folder" in proc.stderr
