"""Helpers for the lane's contract tests: run scripts under ttrecord, read session files."""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
from functools import lru_cache
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
SCRIPTS = HERE / "scripts"


def script(name: str) -> Path:
    return SCRIPTS / name


def marks(name: str) -> dict[str, int]:
    """Line numbers of the `# MARK:<name>` comments in a script."""
    out = {}
    for n, line in enumerate(script(name).read_text().splitlines(), start=1):
        m = re.search(r"#\s*MARK:(\w+)", line)
        if m:
            out[m.group(1)] = n
    return out


def run_script(python: str, name: str, cwd: Path, *, env=None, timeout=180) -> subprocess.CompletedProcess:
    full_env = dict(os.environ)
    full_env.update(env or {})
    return subprocess.run([python, str(script(name))], cwd=cwd, env=full_env, capture_output=True,
                          text=True, timeout=timeout)


def ttrecord_run(python: str, name: str, cwd: Path, *, backend: str = "ttnn", db: str = "S.db",
                 env=None, timeout=180, extra=()) -> tuple[subprocess.CompletedProcess, Path]:
    out = cwd / db
    full_env = dict(os.environ)
    full_env.update(env or {})
    proc = subprocess.run([python, "-m", "ttrecord", "run", "--backend", backend, "-o", str(out),
                           *extra, str(script(name))],
                          cwd=cwd, env=full_env, capture_output=True, text=True, timeout=timeout)
    return proc, out


def describe(proc: subprocess.CompletedProcess) -> str:
    tail = "\n".join((proc.stdout + "\n" + proc.stderr).splitlines()[-40:])
    return f"returncode={proc.returncode} args={proc.args}\n--- last output lines ---\n{tail}"


def rows(db: Path, sql: str, params=()) -> list[dict]:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    conn.row_factory = sqlite3.Row
    try:
        return [dict(r) for r in conn.execute(sql, params)]
    finally:
        conn.close()


def session(db: Path) -> dict:
    return rows(db, "SELECT * FROM session")[0]


def events(db: Path, where: str = "1", params=()) -> list[dict]:
    """Events joined with their call site (file, line, function)."""
    return rows(db, "SELECT e.*, c.file AS cs_file, c.line AS cs_line, c.function AS cs_function "
                    "FROM events e LEFT JOIN callsites c ON c.id = e.callsite "
                    f"WHERE {where} ORDER BY e.seq", params)


def tensors(db: Path, seq: int, role: str | None = None) -> list[dict]:
    if role is None:
        return rows(db, "SELECT * FROM tensors WHERE seq = ? ORDER BY role, pos", (seq,))
    return rows(db, "SELECT * FROM tensors WHERE seq = ? AND role = ? ORDER BY pos", (seq, role))


def op_name_matches(name: str | None, short: str) -> bool:
    """'ttnn.add', 'add' and 'ttnn.experimental.add' all name op `add`."""
    return name is not None and (name == short or name.endswith("." + short))


def seq_output(proc: subprocess.CompletedProcess) -> dict:
    for line in proc.stdout.splitlines():
        if line.startswith("SEQ "):
            return json.loads(line[4:])
    raise AssertionError("no SEQ line in the output:\n" + describe(proc))


@lru_cache(maxsize=1)
def emulator_python() -> str:
    """A python that can import ttrecord.emulator: the lane's own if it can (no torch needed),
    else the project's main venv (which has the CPU torch)."""
    candidates = [sys.executable, str(ROOT / ".venv" / "bin" / "python")]
    errors = []
    for py in candidates:
        if not Path(py).exists():
            errors.append(f"{py}: missing")
            continue
        r = subprocess.run([py, "-c", "import ttrecord.emulator"], capture_output=True, text=True,
                           cwd=ROOT, timeout=120)
        if r.returncode == 0:
            return py
        errors.append(f"{py}: {r.stderr.strip().splitlines()[-1:] or r.returncode}")
    raise AssertionError("no python here can import ttrecord.emulator: " + "; ".join(errors))
