"""Rule: on a terminal, `file:line` in check's text is an OSC 8 hyperlink whose URI ttrecord
builds (percent-encoded, so no character of a session's path reaches the terminal raw);
piped, there is none."""

from __future__ import annotations

import io
import re

from ttrecord.report import check_session, text

from tests.gate.helper_session import build
import pytest

pytestmark = pytest.mark.spawns


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def _links(out: str) -> list[str]:
    return re.findall(r"\x1b\]8;[^;]*;([^\x1b\x07]*)(?:\x1b\\|\x07)", out)


def test_terminal_output_links_each_location(tmp_path, monkeypatch):
    monkeypatch.delenv("NO_COLOR", raising=False)
    session, script = build(tmp_path)
    out = _Tty()
    text.render(check_session(str(session)), out)
    links = [u for u in _links(out.getvalue()) if u]
    assert links and all(u == script.as_uri() for u in links)


def test_piped_output_has_no_links(tmp_path):
    session, _script = build(tmp_path)
    out = io.StringIO()
    text.render(check_session(str(session)), out)
    assert "\x1b]8;" not in out.getvalue()


def test_a_hostile_path_is_percent_encoded_in_the_link(tmp_path, monkeypatch):
    monkeypatch.delenv("NO_COLOR", raising=False)
    folder = tmp_path / "a\x1b]8;;evil\x07b"
    folder.mkdir()
    session, _script = build(folder)
    out = _Tty()
    text.render(check_session(str(session)), out)
    links = [u for u in _links(out.getvalue()) if u]
    # the URIs hold only URI characters (the path's controls were made text, then encoded)
    assert links and all(re.fullmatch(r"file://[A-Za-z0-9%/._~-]+", u) for u in links)
    assert all("%5D8%3B%3Bevil" in u for u in links)
    assert "evil\x07" not in out.getvalue() and "\x1b]8;;evil" not in out.getvalue()
