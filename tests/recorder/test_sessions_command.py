"""`ttrecord sessions DIR` lists every session in a folder with its program, status, backend,
event count and findings, and skips files that are not sessions."""

from __future__ import annotations

from tests.recorder.conftest import run_ttrecord

from ttrecord.events import SessionStatus
from ttrecord.testing import SessionBuilder


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
    lines = {ln.split("│")[1].strip(): ln for ln in proc.stdout.splitlines() if "│" in ln and ".db" in ln}
    assert set(lines) == {"good.db", "bad.db"}
    assert "decode.py" in lines["good.db"] and "ok" in lines["good.db"] and " 3 " in lines["good.db"]
    assert "crashed" in lines["bad.db"] and "emulator" in lines["bad.db"]


def test_empty_folder_says_so(tmp_path):
    """GIVEN a folder without sessions WHEN listing it THEN ttrecord says so and exits 0."""
    proc = run_ttrecord(["sessions", str(tmp_path)], cwd=tmp_path)
    assert proc.returncode == 0 and "No ttrecord sessions" in proc.stdout
