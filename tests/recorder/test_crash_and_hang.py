"""A program that dies inside `execute_trace` (SIGSEGV) or hangs there (--timeout) leaves a
readable session naming that call, its line and phase, with every earlier event kept."""

from __future__ import annotations

from tests.recorder.conftest import SAMPLES

from ttrecord.store.reader import Session
import pytest

pytestmark = pytest.mark.spawns


def _line_of(sample: str, text: str) -> int:
    lines = (SAMPLES / sample).read_text().splitlines()
    return next(i for i, line in enumerate(lines, 1) if text in line)


def _check_last_call(rec, sample: str, status: str) -> None:
    with Session.open(rec.path) as session:
        last = session.last_call()
        assert last is not None
        assert (last.name, last.phase.value, last.status.value) == ("execute_trace", "replay", status)
        assert last.callsite.file == str(SAMPLES / sample)
        assert last.callsite.line == _line_of(sample, "ttnn.execute_trace(")
        # Everything before it is there: open, input, prep op, capture, one good replay.
        names = [e.name for e in session.events(limit=1000) if e.parent is None and e.seq < last.seq
                 and e.kind.value not in ("alloc", "free")]  # fmt: skip
        op = names[2]
        assert names == ["open_device", "from_torch", op, "begin_trace_capture", op,
                         "end_trace_capture", "execute_trace"]  # fmt: skip
        assert last.seq == max(e.seq for e in session.events(limit=1000))


def test_segfault_in_execute_trace_is_recorded(samples):
    """GIVEN a program whose second execute_trace dies by SIGSEGV WHEN recorded THEN the
    session is crashed with signal 11, exit 139, and last_call is that execute_trace."""
    rec = samples["crash_in_replay"]
    row = rec.session()
    assert (row["status"], row["signal"], row["exit_code"]) == ("crashed", 11, 139)
    _check_last_call(rec, "crash_in_replay.py", "died")


def test_hang_in_execute_trace_is_stopped_by_timeout(samples):
    """GIVEN a program that hangs in its second execute_trace WHEN recorded with --timeout 3
    THEN it is stopped, the session is hung (exit 124) and last_call is that execute_trace."""
    rec = samples["hang_in_replay"]
    row = rec.session()
    assert (row["status"], row["exit_code"], rec.proc.returncode) == ("hung", 124, 124)
    _check_last_call(rec, "hang_in_replay.py", "hung")
