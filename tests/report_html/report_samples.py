"""Recording samples and writing their HTML reports, for the tests and the docs' screenshots.

(A module of its own, not conftest: test folders' conftest modules share one import name.)
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "samples"


def record(script: Path, folder: Path, name: str | None = None) -> Path:
    """Run a script under the emulator and return its session file."""
    db = folder / f"{name or script.stem}.db"
    subprocess.run(
        [sys.executable, "-m", "ttrecord.cli.main", "run", "--backend", "emulator", "-o", str(db),
         str(script)],
        cwd=folder, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert db.exists(), f"no session recorded for {script}"
    return db


def html_report(db: Path) -> Path:
    out = db.with_suffix(".html")
    proc = subprocess.run(
        [sys.executable, "-m", "ttrecord.cli.main", "report", str(db), "--html", "-o", str(out)],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    return out
