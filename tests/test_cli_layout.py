"""Rule: one width policy and one set of flags across the commands: help wrapped to the width
by a formatter, the same --fail-on choices, -o never replaces a file without --force."""

from __future__ import annotations

import argparse

import pytest

from ttrecord import terminal
from ttrecord.cli.main import COMMANDS, build_parser, main


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


@pytest.mark.parametrize("columns", [80, 120])
def test_every_help_fits_the_width_without_trailing_spaces(monkeypatch, columns):
    """GIVEN COLUMNS (output not a terminal) WHEN each command's help is formatted THEN no line
    is wider than the width or ends in a space, and prose fills the width (not hand-wrapped)."""
    monkeypatch.setenv("COLUMNS", str(columns))
    parser = build_parser()
    helps = [parser.format_help(), *(p.format_help() for p in _subparsers(parser).values())]
    assert len(helps) == len(COMMANDS) + 1
    for text in helps:
        assert [ln for ln in text.splitlines() if len(ln) > columns or ln != ln.rstrip()] == []
    widest = max(len(ln) for text in helps for ln in text.splitlines())
    assert widest > columns - 12  # wider terminals get wider paragraphs


def test_examples_keep_their_columns_and_long_rows_wrap_under_them(monkeypatch):
    """GIVEN diff's examples (`command   what it does`) at 80 columns WHEN formatted THEN each
    command stays on its line whole and its description continues under its own column; at
    50 columns the description goes under the command."""
    monkeypatch.setenv("COLUMNS", "50")
    lines = _subparsers(build_parser())["diff"].format_help().splitlines()
    row = lines.index("ttrecord diff A.db:2 B.db:1")
    assert lines[row + 1] == "    capture 2 of A with capture 1 of B"
    monkeypatch.setenv("COLUMNS", "80")
    text = _subparsers(build_parser())["diff"].format_help()
    lines = text.splitlines()
    row = next(i for i, ln in enumerate(lines) if ln.startswith("ttrecord diff A.db:2 B.db:1"))
    column = lines[row].index("capture 2 of A")
    assert lines[row + 1].startswith(" " * column) and lines[row + 1].strip()


def test_one_fail_on_set_everywhere():
    """GIVEN check, run --check and the pytest plugin WHEN their --fail-on choices are read
    THEN they are the same set."""
    from ttrecord.pytest_plugin import FAIL_ON

    subs = _subparsers(build_parser())
    choices = [
        next(a.choices for a in subs[name]._actions if "--fail-on" in a.option_strings)
        for name in ("check", "run")
    ]
    assert [tuple(c) for c in choices] == [FAIL_ON, FAIL_ON] == [("error", "warning", "info", "never")] * 2


def test_every_dash_o_has_force(monkeypatch):
    """GIVEN every command with -o WHEN its options are read THEN it also has --force."""
    subs = _subparsers(build_parser())
    with_o = {n for n, p in subs.items() if any("-o" in a.option_strings for a in p._actions)}
    assert with_o == {"run", "check", "report", "export"}
    for name in with_o:
        assert any("--force" in a.option_strings for a in subs[name]._actions), name


def test_report_dash_o_refuses_to_replace_a_file(tmp_path, capsys):
    """GIVEN an existing file WHEN `report -o FILE` (text, JSON or --html) runs without --force
    THEN it exits 2 with one line and the file is untouched; --force replaces only an earlier
    output of ttrecord, never the user's file."""
    from ttrecord.testing import SessionBuilder

    b = SessionBuilder()
    b.open_device()
    session = b.write(tmp_path / "s.db")
    mine = tmp_path / "mine.txt"
    mine.write_text("keep me")
    for extra in ([], ["--format", "json"], ["--html"]):
        assert main(["report", str(session), "-q", "-o", str(mine), *extra]) == 2
        assert "already exists (use --force" in capsys.readouterr().err
        assert mine.read_text() == "keep me"
    assert main(["report", str(session), "-q", "-o", str(mine), "--format", "json", "-f"]) == 2
    assert "not written by ttrecord" in capsys.readouterr().err
    assert mine.read_text() == "keep me"
    ours = tmp_path / "ours.json"
    assert main(["report", str(session), "-q", "-o", str(ours), "--format", "json"]) == 0
    assert main(["report", str(session), "-q", "-o", str(ours), "-f"]) == 0
    assert ours.read_text().startswith("ttrecord session")


@pytest.mark.parametrize(
    "path, room, expected",
    [
        ("/home/me/work/ttrecord/samples/freed_input.py:38", 80,
         "/home/me/work/ttrecord/samples/freed_input.py:38"),
        ("/home/me/work/ttrecord/samples/freed_input.py:38", 36,
         "/home/me/…/samples/freed_input.py:38"),
        ("/home/me/work/ttrecord/samples/freed_input.py:38", 24, "/…/freed_input.py:38"),
        ("/home/me/work/ttrecord/samples/freed_input.py:38", 10, "…put.py:38"),
    ],
)
def test_paths_are_shortened_from_the_middle_keeping_name_and_line(path, room, expected):
    shown = terminal.shorten_path(path, room)
    assert shown == expected and len(shown) <= room
    assert shown.endswith(":38")


def test_width_is_80_when_not_a_terminal_else_columns(monkeypatch, tmp_path):
    with open(tmp_path / "out.txt", "w") as piped:
        monkeypatch.delenv("COLUMNS", raising=False)
        assert terminal.width(piped) == 80
        monkeypatch.setenv("COLUMNS", "132")
        assert terminal.width(piped) == 132


def test_no_line_ends_in_spaces_even_before_colour_codes():
    assert terminal.strip_trailing("a   \nb \x1b[0m\nc") == "a\nb\x1b[0m\nc"
