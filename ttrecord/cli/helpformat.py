"""Help text wrapped to the terminal (ttrecord.terminal's width), not by hand in the source.

Descriptions and epilogs are the commands' docstrings. Their prose paragraphs are re-filled to
the width; lines that start with a space or with a command (`ttrecord …`, `pytest …`) are
examples and table rows, kept as written when they fit. A row too long for the width is
`term  description`: when a block's descriptions share one column, they wrap under it;
otherwise each goes on the lines under its term.
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
    rows: list[str] = []

    def flush() -> None:
        if prose:
            lines.extend(textwrap.wrap(" ".join(p.strip() for p in prose), width,
                                       initial_indent=indent, subsequent_indent=indent,
                                       break_on_hyphens=False))  # fmt: skip
            prose.clear()
        if rows:
            lines.extend(_rows(rows, width))
            rows.clear()

    for line in paragraph.splitlines():
        if line.startswith((" ", "\t", *_LITERAL)):
            if prose:
                flush()
            rows.append(indent + line.rstrip())
        else:
            if rows:
                flush()
            prose.append(line)
    flush()
    return lines


def _rows(rows: list[str], width: int) -> list[str]:
    """Example rows as written when they all fit; else each description under its command
    (one layout for the whole block, so the rows still read as a table)."""
    if all(len(row) <= width for row in rows):
        return rows
    matches = [_ROW.match(row) for row in rows]
    columns = {len(m[1]) + len(m[2]) + len(m[3]) for m in matches if m is not None}
    hanging = len(columns) == 1 and next(iter(columns)) <= width * 0.6
    out: list[str] = []
    for row, m in zip(rows, matches, strict=True):
        if m is None:  # a command line: breaking it would make it wrong to copy
            out.append(row)
            continue
        lead, term, gap, desc = m.groups()
        if hanging:  # a table with one description column: wrap under that column
            column = len(lead) + len(term) + len(gap)
            wrapped = textwrap.wrap(desc, width - column, break_on_hyphens=False)
            out += [lead + term + gap + wrapped[0], *(" " * column + w for w in wrapped[1:])]
            continue
        under = " " * (len(lead) + 4)
        out += [lead + term, *textwrap.wrap(desc, width, initial_indent=under,
                                            subsequent_indent=under, break_on_hyphens=False)]  # fmt: skip
    return out
