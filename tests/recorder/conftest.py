"""Shared helpers: run `ttrecord run` as a user would and open the session it wrote.

Each run starts a child interpreter that imports torch (~1.5 s of CPU), so the samples are
recorded once per test session, a few at a time, and the tests read the stored rows.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.recorded_samples import SAMPLE_FLAGS, SampleCache

__all__ = ["SAMPLE_FLAGS"]

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "samples"
TTRECORD = [sys.executable, "-m", "ttrecord"]


@dataclass
class Recorded:
    proc: subprocess.CompletedProcess
    path: Path

    def db(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path)
        conn.row_factory = sqlite3.Row
        return conn

    def rows(self, sql: str, *params: object) -> list[sqlite3.Row]:
        with self.db() as conn:
            return conn.execute(sql, params).fetchall()

    def session(self) -> sqlite3.Row:
        return self.rows("SELECT * FROM session")[0]


def run_ttrecord(args: list[str], cwd: Path, timeout: float = 60, env_extra: dict | None = None,
                 **kw) -> subprocess.CompletedProcess:  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(REPO), **(env_extra or {})}
    env.pop("TTRECORD_EMULATOR_FAULT", None)
    return subprocess.run([*TTRECORD, *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, env=env, **kw)  # fmt: skip


def record(script: str | Path, tmp: Path, *flags: str, program_args: tuple[str, ...] = (),
           name: str | None = None) -> Recorded:  # fmt: skip
    out = tmp / f"{name or Path(script).stem}.db"
    args = ["run", "--backend", "emulator", "-o", str(out), *flags, str(script), *program_args]
    return Recorded(run_ttrecord(args, cwd=tmp), out)


class _Samples:
    """Samples recorded in the background, two at a time; indexing waits for one. The
    recordings come from the run's shared cache (each sample is recorded once per test run);
    each test module's fixture gets its own copies of the session files."""

    def __init__(self, cache: SampleCache, tmp: Path) -> None:
        self._pool = ThreadPoolExecutor(max_workers=2)
        names = sorted(p.stem for p in SAMPLES.glob("*.py"))
        if os.environ.get("PYTEST_XDIST_WORKER", "gw0") != "gw0":
            names.reverse()  # another worker starts from the other end: less waiting
        self._futures = {n: self._pool.submit(self._get, cache, n, tmp) for n in names}

    @staticmethod
    def _get(cache: SampleCache, name: str, tmp: Path) -> Recorded:
        run = cache.get(name, *SAMPLE_FLAGS.get(name, []))
        return Recorded(run.completed(), run.copy_to(tmp, f"{name}.db"))

    def __getitem__(self, name: str) -> Recorded:
        return self._futures[name].result()

    def close(self) -> None:
        self._pool.shutdown(cancel_futures=True)


@pytest.fixture(scope="session")
def samples(sample_cache: SampleCache, tmp_path_factory: pytest.TempPathFactory):
    """Every sample recorded with --backend emulator, by sample name."""
    recorded = _Samples(sample_cache, tmp_path_factory.mktemp("samples"))
    yield recorded
    recorded.close()


@pytest.fixture
def write_script(tmp_path: Path):
    """Write a small program into the test's folder; returns its path."""

    def write(name: str, text: str) -> Path:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        return path

    return write


PROLOGUE = """\
import torch
import ttnn
device = ttnn.open_device(device_id=0, trace_region_size=1 << 20)
def tensor(value=1.0):
    return ttnn.from_torch(torch.full((32, 32), value), dtype=ttnn.bfloat16,
                           layout=ttnn.TILE_LAYOUT, device=device)
"""
