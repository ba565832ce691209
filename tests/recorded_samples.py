"""Samples recorded once per test run and shared by every test (and xdist worker) that needs
them.

A `ttrecord run` of a sample costs a child interpreter that imports torch (~2 s of CPU); the
suite reads the same few recordings from many test modules, so each (sample, flags) is
recorded by the first worker that asks, under a file lock in a folder all workers of the run
share, and the others wait for it and read the result. Each caller gets its own copy of the
session file (tests may store findings into it); the copy costs a millisecond.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "samples"
# Samples that end badly on purpose get their own flags.
SAMPLE_FLAGS = {"hang_in_replay": ["--timeout", "3"]}


@dataclass(frozen=True)
class SampleRun:
    """One recording: the session (the shared original: copy it before writing) and how the
    `ttrecord run` process ended."""

    path: Path
    args: list[str]
    returncode: int
    stdout: str
    stderr: str

    def completed(self) -> subprocess.CompletedProcess:
        return subprocess.CompletedProcess(self.args, self.returncode, self.stdout, self.stderr)

    def copy_to(self, folder: Path, name: str | None = None) -> Path:
        """A private copy of the session in `folder` (named `name`, default the original's)."""
        folder.mkdir(parents=True, exist_ok=True)
        dest = folder / (name or self.path.name)
        if self.path.exists():
            shutil.copyfile(self.path, dest)
        return dest


class SampleCache:
    """Recordings of this test run, in `folder` (shared by the run's xdist workers)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)

    def get(self, script: str | Path, *flags: str, program_args: tuple[str, ...] = (),
            timeout: float = 180, env: dict[str, str] | None = None) -> SampleRun:  # fmt: skip
        """The recording of `script` (a sample name or a path) run with `flags` (and
        `program_args` for the script, `env` added to the environment); recorded now unless
        this run already has it."""
        path = Path(script) if isinstance(script, Path) or "/" in str(script) else (
            SAMPLES / f"{script}.py")  # fmt: skip
        path = path.resolve()
        parts: list = [str(path), flags, program_args] + ([sorted(env.items())] if env else [])
        key = hashlib.sha1(json.dumps(parts).encode()).hexdigest()[:12]
        stem = f"{path.stem}-{key}"
        meta = self.folder / f"{stem}.json"
        with open(self.folder / f"{stem}.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # another worker recording it: wait for it
            if not meta.exists():
                self._record([*flags, str(path), *program_args], self.folder / f"{stem}.db",
                             meta, timeout, env or {})  # fmt: skip
        info = json.loads(meta.read_text())
        return SampleRun(self.folder / f"{stem}.db", info["args"], info["returncode"],
                         info["stdout"], info["stderr"])  # fmt: skip

    def _record(self, run_args: list[str], out: Path, meta: Path, timeout: float,
                env_extra: dict[str, str]) -> None:  # fmt: skip
        args = [sys.executable, "-m", "ttrecord", "run", "--backend", "emulator", "-o", str(out),
                *run_args]  # fmt: skip
        env = {**os.environ, "PYTHONPATH": str(ROOT), **env_extra}
        env.pop("TTRECORD_EMULATOR_FAULT", None)
        try:  # from the repository's root: session paths (SARIF URIs) are relative to it
            proc = subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=timeout,
                                  env=env)  # fmt: skip
            result = {"args": args, "returncode": proc.returncode, "stdout": proc.stdout,
                      "stderr": proc.stderr}  # fmt: skip
        except subprocess.TimeoutExpired as exc:
            result = {"args": args, "returncode": -9, "stdout": str(exc.stdout or ""),
                      "stderr": f"timed out after {timeout} s"}  # fmt: skip
        tmp = meta.with_suffix(".tmp")
        tmp.write_text(json.dumps(result))
        tmp.replace(meta)


def shared_folder(basetemp: Path) -> Path:
    """The folder every worker of this run sees: xdist workers' basetemps are siblings."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        return basetemp.parent / "recorded-samples"
    return basetemp / "recorded-samples"
