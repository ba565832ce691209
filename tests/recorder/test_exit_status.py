"""ttrecord's exit status is the program's, and the session says how the program ended:
ok (with its exit code), error (exception type, message, traceback), crashed (os._exit inside
a ttnn call)."""

from __future__ import annotations

from tests.recorder.conftest import PROLOGUE, record
import pytest

pytestmark = pytest.mark.spawns


def test_python_exception_is_an_error_session(samples):
    """GIVEN a program raising ValueError WHEN recorded THEN the session is `error` with the
    type, message and a traceback ending at the raising line, and ttrecord exits 1."""
    rec = samples["python_error"]
    row = rec.session()
    assert (row["status"], row["error_type"], rec.proc.returncode) == ("error", "ValueError", 1)
    assert "expected 128 logits" in row["error_message"]
    assert 'python_error.py", line' in row["traceback"]
    assert "runpy" not in row["traceback"] and "ttrecord/recorder" not in row["traceback"]
    assert "ValueError: expected 128 logits" in rec.proc.stderr


def test_an_exception_inside_a_ttnn_call_shows_only_the_programs_frames(tmp_path, write_script):
    """GIVEN a program whose ttnn call raises inside the emulator WHEN recorded THEN stderr's
    traceback is the program's as plain python prints it down to the ttnn call, without the
    proxy's, emulator's or runner's frames, and ttrecord exits 1 as python would."""
    script = write_script("bad_add.py", PROLOGUE + "a = tensor()\n"
                          "b = ttnn.from_torch(torch.ones((64, 64)), dtype=ttnn.bfloat16,"
                          " layout=ttnn.TILE_LAYOUT, device=device)\n"
                          "def step():\n    return ttnn.add(a, b)\nstep()\n")  # fmt: skip
    rec = record(script, tmp_path)
    assert rec.proc.returncode == 1, rec.proc.stderr
    lines = rec.proc.stderr.splitlines()
    start = lines.index("Traceback (most recent call last):")
    frames = [ln for ln in lines[start:] if ln.startswith('  File "')]
    assert [ln.rsplit(", in ", 1)[1] for ln in frames] == ["<module>", "step"]
    assert all(str(script) in ln for ln in frames)
    end = next(i for i in range(start, len(lines)) if lines[i].startswith("RuntimeError"))
    assert "return ttnn.add(a, b)" in "\n".join(lines[start:end])
    assert rec.session()["traceback"].count('File "') == 2  # the session keeps the same one


def test_sys_exit_code_is_passed_through(tmp_path, write_script):
    """GIVEN a program ending with sys.exit(3) after a ttnn call WHEN recorded THEN ttrecord
    exits 3 and the session is ok with exit_code 3 and the call complete."""
    script = write_script("exits.py", PROLOGUE + "a = tensor()\nimport sys\nsys.exit(3)\n")
    rec = record(script, tmp_path)
    assert rec.proc.returncode == 3, rec.proc.stderr
    assert (rec.session()["status"], rec.session()["exit_code"]) == ("ok", 3)
    assert [r["status"] for r in rec.rows("SELECT status FROM events WHERE parent IS NULL"
                                          " AND kind != 'alloc'")] == ["ok", "ok"]  # fmt: skip


def test_os_exit_after_calls_keeps_their_ends(tmp_path, write_script):
    """GIVEN a program leaving through os._exit(5) between ttnn calls WHEN recorded THEN no
    call is marked died (queued records are flushed) and ttrecord exits 5."""
    script = write_script("oexit.py", PROLOGUE + "a = tensor()\nb = ttnn.add(a, a)\n"
                                                 "import os\nos._exit(5)\n")  # fmt: skip
    rec = record(script, tmp_path)
    assert rec.proc.returncode == 5
    assert rec.session()["status"] == "ok"
    assert not rec.rows("SELECT seq FROM events WHERE status != 'ok'")
    assert rec.rows("SELECT name FROM events WHERE kind = 'op'")[0]["name"] == "add"


def test_ttnn_error_is_stored_on_the_call(samples):
    """GIVEN a sync inside a capture (ttnn raises TT_FATAL) WHEN recorded THEN that call is
    `raised` with the TT_FATAL text and the session is `error` with the same message."""
    rec = samples["sync_in_capture"]
    call = rec.rows("SELECT * FROM events WHERE status = 'raised'")[0]
    assert (call["kind"], call["name"], call["phase"]) == ("sync", "synchronize_device", "capture")
    assert "Event Synchronization is not supported during trace capture." in call["error"]
    assert rec.session()["error_type"] == "RuntimeError"
