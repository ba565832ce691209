"""Rule: `ttrecord run -q` prints none of ttrecord's own lines; the program's output and exit
status are untouched, and the program's environment does not carry the switch."""

from __future__ import annotations

from tests.recorder.conftest import run_ttrecord
import pytest

pytestmark = pytest.mark.spawns


def test_run_quiet_leaves_only_the_programs_output(tmp_path):
    (tmp_path / "p.py").write_text(
        "import os, sys\nprint('out')\nprint('err', file=sys.stderr)\n"
        "print('env' if 'TTRECORD_RUN_QUIET' in os.environ else 'clean')\nsys.exit(3)\n")
    proc = run_ttrecord(["run", "-q", "--backend", "emulator", "-o", "s.db", "p.py"], cwd=tmp_path)
    assert proc.returncode == 3
    assert proc.stdout.splitlines() == ["out", "clean"]
    assert proc.stderr.splitlines() == ["err"]
    assert (tmp_path / "s.db").exists()
