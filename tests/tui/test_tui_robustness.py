"""Bad or unusual sessions show a clear message inside the UI, never a traceback."""

import os
import sqlite3

from tui_pilot import settle, screen_text
from tui_sessions import OFFENDING_LINE, SCRIPT, build_empty

from ttrecord.events import SessionStatus
from ttrecord.store import liveness
from ttrecord.tui.app import TtrecordApp
import pytest

pytestmark = pytest.mark.slow


async def _open(path, size=(120, 40), keys=()):
    app = TtrecordApp([str(path)])
    async with app.run_test(size=size) as pilot:  # re-raises anything the app raised
        await settle(pilot)
        for key in keys:
            await pilot.press(key)
            await settle(pilot)
        return screen_text(app)


async def test_file_that_is_not_a_session(workdir):
    """GIVEN a .db file that is not SQLite WHEN opened THEN the overview says why."""
    bad = workdir / "notes.db"
    bad.write_text("just some text")
    text = " ".join((await _open(bad)).split())  # the message may wrap
    assert "This session cannot be shown." in text
    assert "not a ttrecord session (not an SQLite file)" in text


async def test_truncated_session(workdir, alloc_session):
    """GIVEN a session cut off after its first pages WHEN opened THEN the UI reports the file
    as damaged instead of crashing."""
    cut = workdir / "cut.db"
    cut.write_bytes(alloc_session.read_bytes()[:8192])
    for keys in ([], ["t"], ["m"]):
        text = " ".join((await _open(cut, keys=keys)).split())
        assert "cannot be" in text or "damaged or truncated" in text, keys


async def test_session_still_being_written(workdir):
    """GIVEN a session whose status is still 'running' and whose recorder is alive (it holds
    the lock on the log) WHEN opened THEN the overview says it may be incomplete."""
    path = build_empty(workdir, "live.db", SessionStatus.RUNNING)
    fd = liveness.lock_log(liveness.log_path(path))
    try:
        text = await _open(path)
    finally:
        os.close(fd)
    assert "still being recorded" in text


async def test_session_left_running_by_a_dead_recorder(workdir):
    """GIVEN a session whose status is 'running' but no recorder holds its log WHEN opened
    THEN the overview says the recording stopped abnormally, not that it is being recorded."""
    path = build_empty(workdir, "dead.db", SessionStatus.RUNNING)
    text = " ".join((await _open(path)).split())
    assert "still being recorded" not in text
    assert "recording stopped abnormally" in text


async def test_empty_session(workdir):
    """GIVEN a session with no events WHEN opened THEN the overview says nothing was recorded
    and the timeline shows zero events."""
    path = build_empty(workdir)
    assert "Nothing to judge: No ttnn call was recorded" in " ".join((await _open(path)).split())
    assert "0 events" in await _open(path, keys=["t"])


async def test_source_gone_from_disk_and_store(workdir, alloc_session):
    """GIVEN the script deleted and no stored copy WHEN the finding opens THEN it says the
    source is not available, and still shows the finding."""
    (workdir / SCRIPT).unlink()
    conn = sqlite3.connect(alloc_session)
    with conn:
        conn.execute("DELETE FROM sources")
    conn.close()
    text = await _open(alloc_session, keys=["enter"])
    assert f"Source not available: {SCRIPT} is not on this machine" in text
    assert "TR004" in text


async def test_source_gone_from_disk_uses_the_stored_copy(workdir, alloc_session):
    """GIVEN the script deleted after recording WHEN the finding opens THEN the copy kept in
    the session shows the offending line."""
    (workdir / SCRIPT).unlink()
    text = await _open(alloc_session, keys=["enter"])
    assert f"❱ {OFFENDING_LINE} scratch = ttnn.from_torch" in text


async def test_folder_without_sessions(workdir):
    """GIVEN a folder with no sessions (and a non-session .db) WHEN `ttrecord tui` lists it
    THEN the list says how to record one."""
    (workdir / "other.db").write_bytes(b"SQLite format 3\x00" + bytes(100))
    app = TtrecordApp([])
    async with app.run_test(size=(120, 20)) as pilot:
        await settle(pilot)
        text = " ".join(screen_text(app).split())
    assert "No ttrecord sessions here. Record one with `ttrecord run -o session.db script.py`" in text
