"""A Python program recorded with --native gives the same session as without it.

The native recorder sees every tt-metal call the Python program makes through ttnn's
bindings, and the Python recorder records the same calls: the native ones reached through
the bindings are dropped, so events and findings are those of a plain recording.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest

from realttnn_helpers import describe, events, ttrecord_run

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="no C++ compiler (g++)")


def findings(db, cwd) -> list[tuple]:
    proc = subprocess.run([sys.executable, "-m", "ttrecord", "check", "--format", "json",
                           "--allow-incomplete", str(db)], cwd=cwd, capture_output=True,
                          text=True, timeout=120)  # fmt: skip
    out = json.loads(proc.stdout)["findings"]
    # a TT_FATAL's text ends with its own backtrace (addresses differ from run to run)
    return sorted((f["id"], f["file"], f["line"], f["message"].split("\nbacktrace:")[0])
                  for f in out)


@pytest.mark.parametrize("name", ["read_in_capture.py", "transfers_in_capture.py",
                                  "read_in_capture_uncaught.py", "ops_and_reads.py"])
def test_python_program_with_native_matches_plain(name, tmp_path):
    """Rule: --native adds nothing and loses nothing for calls made through ttnn's Python API."""
    plain, db_plain = ttrecord_run(sys.executable, name, tmp_path, db="plain.db")
    native, db_native = ttrecord_run(sys.executable, name, tmp_path, db="native.db",
                                     extra=("--native",))
    assert native.returncode == plain.returncode, describe(native)
    got, want = findings(db_native, tmp_path), findings(db_plain, tmp_path)
    if name != "ops_and_reads.py":  # ops, allocations and reads, with no hazard
        assert want, "the script is meant to have findings"
    assert got == want
    kinds = lambda db: [(e["kind"], e["name"], e["phase"]) for e in events(db)]  # noqa: E731
    assert kinds(db_native) == kinds(db_plain)
