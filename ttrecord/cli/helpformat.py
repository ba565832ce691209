"""Help text wrapped to the terminal (ttrecord.terminal's width), not by hand in the source.

Descriptions and epilogs are the commands' docstrings. Their prose paragraphs are re-filled to
the width; lines that start with a space or with a command (`ttrecord …`, `pytest …`) are
examples and table rows, kept as written when they fit. A row too long for the width is
`term  description`: the description wraps under its own column, or under the term when that
column is too far right.
"""

from __future__ import annotations

import argparse
import re
import sys
import textwrap

from ttrecord import terminal

_LITERAL = ("ttrecord ", "pytest ")
_ROW = re.compile(r"^(\s*)(\S.*?)(\s{2,})(\S.*)$")


class Formatter(argparse.HelpFormatter):
    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 28,
                 width: int | None = None) -> None:  # fmt: skip
        width = width if width is not None else terminal.width(sys.stdout) - 2
        super().__init__(prog, indent_increment, max_help_position, width)

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        out: list[str] = []
        for paragraph in re.split(r"\n[ \t]*\n", text.strip("\n")):
            out += fill(paragraph, width, indent)
            out.append("")
        return "\n".join(out).rstrip("\n") + "\n"


def fill(paragraph: str, width: int, indent: str = "") -> list[str]:
    """One paragraph of a docstring as lines of at most `width` (see the module docstring)."""
    lines: list[str] = []
    prose: list[str] = []

    def flush() -> None:
        if prose:
            lines.extend(textwrap.wrap(" ".join(p.strip() for p in prose), width,
                                       initial_indent=indent, subsequent_indent=indent,
                                       break_on_hyphens=False))  # fmt: skip
            prose.clear()

    for line in paragraph.splitlines():
        if line.startswith((" ", "\t", *_LITERAL)):
            flush()
            lines += _row(indent + line.rstrip(), width)
        else:
            prose.append(line)
    flush()
    return lines


def _row(line: str, width: int) -> list[str]:
    if len(line) <= width:
        return [line]
    m = _ROW.match(line)
    if m is None:  # a command line: breaking it would make it wrong to copy
        return [line]
    lead, term, gap, desc = m.groups()
    column = len(lead) + len(term) + len(gap)
    if column <= width * 0.6:  # the description wraps under its own column
        wrapped = textwrap.wrap(desc, width - column, break_on_hyphens=False)
        return [lead + term + gap + wrapped[0], *(" " * column + w for w in wrapped[1:])]
    under = " " * (len(lead) + 4)
    return [lead + term, *textwrap.wrap(desc, width, initial_indent=under, subsequent_indent=under,
                                        break_on_hyphens=False)]  # fmt: skip

