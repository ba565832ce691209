"""`ttrecord sessions DIR` lists every session in a folder with its program, status, backend,
event count and findings, and skips files that are not sessions."""

from __future__ import annotations

from tests.recorder.conftest import run_ttrecord

from ttrecord.events import SessionStatus
from ttrecord.testing import SessionBuilder
import pytest

pytestmark = pytest.mark.spawns


def test_lists_sessions_and_skips_other_files(tmp_path):
    """GIVEN two sessions (ok and crashed) and a non-session .db WHEN listing the folder THEN
    both sessions appear with status, backend and event counts, and the other file does not."""
    b = SessionBuilder("decode.py")
    b.open_device()
    x = b.alloc(1048704)
    b.op("add", [x], [x], line=3)
    b.write(tmp_path / "good.db")
    SessionBuilder("crashy.py").write(tmp_path / "bad.db", status=SessionStatus.CRASHED,
                                      script="crashy.py")  # fmt: skip
    (tmp_path / "notes.db").write_bytes(b"not sqlite at all")
    proc = run_ttrecord(["sessions", str(tmp_path)], cwd=tmp_path,
                        env_extra={"COLUMNS": "200"})  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    lines = {ln.split()[0]: ln for ln in proc.stdout.splitlines() if ln.split(".db ")[0] and ".db " in ln}
    assert set(lines) == {"good.db", "bad.db"}
    assert "decode.py" in lines["good.db"] and "ok" in lines["good.db"] and " 3 " in lines["good.db"]
    assert "crashed" in lines["bad.db"] and "emulator" in lines["bad.db"]


def test_empty_folder_says_so(tmp_path):
    """GIVEN a folder without sessions WHEN listing it THEN ttrecord says so and exits 0."""
    proc = run_ttrecord(["sessions", str(tmp_path)], cwd=tmp_path)
    assert proc.returncode == 0 and "No ttrecord sessions" in proc.stdout


def test_findings_of_a_session_never_checked_are_computed(tmp_path):
    """GIVEN a session with an allocation over trace memory that nobody ran `check` on
    WHEN listing the folder THEN its findings column counts that finding, not 0."""
    import sys

    sys.path.insert(0, str(__import__("pathlib").Path(__file__).parents[1] / "analysis"))
    from analysis_helpers import H, captured_step

    b = SessionBuilder()
    tid, x, w, y = captured_step(b)
    b.alloc(H, parent=b.h2d(None, line=30, name="from_torch").seq)
    b.execute(tid, line=31)
    b.release(tid, line=32)
    b.write(tmp_path / "unchecked.db")
    proc = run_ttrecord(["sessions", str(tmp_path)], cwd=tmp_path, env_extra={"COLUMNS": "200"})
    assert proc.returncode == 0, proc.stderr
    row = next(ln for ln in proc.stdout.splitlines() if "unchecked.db" in ln)
    assert row.split()[-1] == "1"
