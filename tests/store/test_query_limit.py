"""Every reader query is bounded in time: a crafted file can make a query endless, and a reader
stops it with one line instead of hanging."""

from __future__ import annotations

import pytest

from tests.tui.tui_sessions import build_alloc_after_capture
from ttrecord.errors import SessionError
from ttrecord.store.reader import (
    QUERY_SECONDS_ENV,
    DEFAULT_QUERY_SECONDS,
    Session,
    query_seconds,
)

ENDLESS = ("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n)"
           " SELECT count(*) FROM n")  # fmt: skip


def test_an_endless_query_is_stopped_with_one_line(tmp_path, monkeypatch):
    monkeypatch.setenv(QUERY_SECONDS_ENV, "0.2")
    with Session.open(build_alloc_after_capture(tmp_path)) as session:
        with pytest.raises(SessionError) as raised:
            session.query(ENDLESS)
        assert "a query ran longer than 0.2 s and was stopped" in str(raised.value)
        assert "\n" not in str(raised.value)
        # the session stays usable, and the next failure is told apart from a time-out
        assert session.event_count() > 0
        with pytest.raises(SessionError, match="damaged or truncated"):
            session.query("SELECT no_such_column FROM events")


def test_an_endless_streamed_query_is_stopped(tmp_path, monkeypatch):
    monkeypatch.setenv(QUERY_SECONDS_ENV, "0.2")
    session = Session.open(build_alloc_after_capture(tmp_path))
    with session, pytest.raises(SessionError, match="ran longer than 0.2 s"):
        for _ in session.query_iter("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL"
                                        " SELECT i + 1 FROM n) SELECT i FROM n WHERE i < 0"):  # fmt: skip
            pass


@pytest.mark.parametrize("text", ["", "abc", "-1", "0", "inf", "nan"])
def test_a_bad_limit_falls_back_on_the_default(monkeypatch, text):
    monkeypatch.setenv(QUERY_SECONDS_ENV, text)
    assert query_seconds() == DEFAULT_QUERY_SECONDS
