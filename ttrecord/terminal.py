"""One width policy for everything ttrecord prints in a terminal or a pipe.

- The width is the terminal's when the output is one; otherwise `COLUMNS` when it is set,
  else 80. (Rich alone would take the width of whichever standard stream is a terminal, so a
  piped `report` came out as wide as the terminal next to it.)
- No line ends in spaces: Rich pads wrapped and padded lines to the full width, `strip_trailing`
  takes that off as the text is written.
- A path too long for its room is shortened from the middle: the file name and the `:line`
  after it stay whole (they are what a reader and an editor's link need), the folders nearest
  to the root go first.
"""

from __future__ import annotations

import os
import re
import shutil
from typing import IO, Any

DEFAULT_WIDTH = 80
MIN_WIDTH = 40  # narrower terminals still get 40-column layouts (tables need some room)

_TRAILING = re.compile(r"[ \t]+((?:\x1b\[[0-9;]*m)*)$", re.MULTILINE)


def width(stream: IO[Any] | None = None) -> int:
    """Columns to lay out text for on `stream` (see the module docstring)."""
    columns = os.environ.get("COLUMNS", "")
    if _is_terminal(stream):
        if columns.isdigit() and int(columns) > 0:
            return max(MIN_WIDTH, int(columns))
        try:
            return max(MIN_WIDTH, os.get_terminal_size(stream.fileno()).columns)  # type: ignore[union-attr]
        except (OSError, ValueError, AttributeError):
            return max(MIN_WIDTH, shutil.get_terminal_size((DEFAULT_WIDTH, 24)).columns)
    if columns.isdigit() and int(columns) > 0:
        return max(MIN_WIDTH, int(columns))
    return DEFAULT_WIDTH


def _is_terminal(stream: IO[Any] | None) -> bool:
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty and isatty())
    except ValueError:  # a closed stream
        return False


def strip_trailing(text: str) -> str:
    """`text` without spaces at the end of any line (colour codes after them are kept)."""
    return _TRAILING.sub(r"\1", text)


def shorten_path(path: str, room: int) -> str:
    """`path` in at most `room` characters, cut from the middle: the file name (and a `:line`
    suffix) always stays; then folders next to it and from the root, in turn, around an `…`."""
    if len(path) <= room:
        return path
    sep = "\\" if "\\" in path and "/" not in path else "/"
    *folders, name = path.split(sep)
    if not folders or len(name) + 2 > room:
        return name if len(name) <= room or room < 2 else "…" + name[-(room - 1):]
    head: list[str] = []
    tail = [name]
    left, right = 0, len(folders)  # folders[left:right] are the ones left out so far
    next_to_name, full = True, {True: False, False: False}
    while left < right and not all(full.values()):
        if next_to_name:
            trial = (head, [folders[right - 1], *tail])
        else:
            trial = ([*head, folders[left]], tail)
        if len(sep.join([*trial[0], "…", *trial[1]])) > room:
            full[next_to_name] = True
        else:
            head, tail = trial
            if next_to_name:
                right -= 1
            else:
                left += 1
        if not full[not next_to_name]:
            next_to_name = not next_to_name
    return sep.join([*head, "…", *tail])


def fit(text: str, room: int) -> str:
    """`text` cut to `room` characters with an `…` at the end (for source lines: their line
    number comes first and stays)."""
    return text if len(text) <= room else text[: max(room - 1, 0)] + "…"


def where(file: str, line: int | None, room: int) -> str:
    """`file:line` in at most `room` characters (at least the file name and line stay)."""
    return shorten_path(f"{file}:{line}" if line else file, room)


class PathCell:
    """A `file:line` for a Rich table cell: as wide as the table allows, shortened from the
    middle when it must be (never cut at the end, which loses the line number)."""

    def __init__(self, text: str, style: str = "", prefix: str = "") -> None:
        self.text = text
        self.style = style
        self.prefix = prefix  # shown whole before the path (e.g. the call that allocated)

    def __rich_measure__(self, console: Any, options: Any) -> Any:
        from rich.measure import Measurement

        name = self.text.replace("\\", "/").rsplit("/", 1)[-1]
        full = len(self.prefix) + len(self.text)
        return Measurement(min(full, len(self.prefix) + len(name) + 2), full)

    def __rich_console__(self, console: Any, options: Any) -> Any:
        from rich.text import Text

        room = max(options.max_width - len(self.prefix), 1)
        yield Text(self.prefix + shorten_path(self.text, room), style=self.style, no_wrap=True)


def wrap(text: str, stream: IO[Any] | None = None, indent: str = "  ", keep: int = 2) -> str:
    """A one-line message wrapped to `stream`'s width at spaces, later lines indented. Words
    (paths, commands) are never broken, and the first `keep` words stay on the first line
    together (`wrote PATH`, `ttrecord: backend`), so a script can still find them there."""
    room = width(stream)
    words = text.split(" ")
    lines: list[str] = []
    line = " ".join(words[:keep])
    for word in words[keep:]:
        if len(line) + 1 + len(word) <= room:
            line += " " + word
        else:
            lines.append(line)
            line = indent + word
    lines.append(line)
    return "\n".join(lines)
