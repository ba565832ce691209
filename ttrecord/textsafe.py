"""One escaping policy for text that comes from a session (file names, arguments, exception
messages, tracebacks): it is data, never markup and never terminal control.

- `clean(text)`: control characters (C0 except newline and tab, DEL, C1: the ESC of ANSI and
  OSC sequences, BEL, CR) and the bidirectional controls that reorder what a line shows
  (U+202A-U+202E, U+2066-U+2069, U+200E/F, U+061C) are shown as visible escapes (`\\x1b`,
  `\\u202e`); text longer than MAX_CHARS is cut with a note saying how much was left out.
- `console(...)`: a Rich Console for terminal output built from session text: markup and emoji
  codes off (a string is shown as it is) and every text segment cleaned as it is written, so a
  string that reaches it by any path cannot drive the terminal. It follows ttrecord.terminal's
  width policy and writes no trailing spaces.

Machine formats (JSON, SARIF, exports) keep the exact text: their encoders escape it.
"""

from __future__ import annotations

import copy as _copy
import dataclasses
import re
import sys
from enum import Enum
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console
    from rich.segment import Segment

MAX_CHARS = 4000

_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def clean(text: Any, limit: int | None = MAX_CHARS) -> str:
    """`text` safe to show in a terminal or a widget, as one may read it."""
    if text is None:
        return ""
    if not isinstance(text, str):
        text = str(text)
    if limit is not None and len(text) > limit:
        text = f"{text[:limit]}… ({len(text) - limit:,} more characters)"
    return _UNSAFE.sub(_escape, text)


def console(**kwargs: Any) -> Console:  # rich is imported lazily
    """A Rich Console that shows strings as data (see the module docstring)."""
    from rich.console import Console

    class SafeConsole(Console):
        def _render_buffer(self, buffer: Iterable[Segment]) -> str:
            from rich.segment import Segment

            return strip_trailing(super()._render_buffer(
                Segment(clean(text, None), style, control) if control is None and text else
                Segment(text, style, control)
                for text, style, control in buffer
            ))  # fmt: skip

    from ttrecord.terminal import strip_trailing, width

    if "width" not in kwargs:  # the one width policy (ttrecord.terminal)
        kwargs["width"] = width(kwargs.get("file") or sys.stdout)
    kwargs.setdefault("markup", False)
    kwargs.setdefault("highlight", False)
    kwargs.setdefault("emoji", False)
    return SafeConsole(**kwargs)


_ATOMS = (int, float, bool, bytes, type(None))


def clean_deep(value: Any, limit: int | None = MAX_CHARS) -> Any:
    """`value` with every string inside it (tuples, lists, dicts, dataclasses) cleaned; the
    same objects come back when nothing needed cleaning. For viewers, whose every widget
    shows session text: cleaning the data they get covers every widget at once."""
    if isinstance(value, str):
        if (limit is None or len(value) <= limit) and not _UNSAFE.search(value):
            return value
        return clean(value, limit)
    if isinstance(value, (*_ATOMS, Enum)):
        return value
    if isinstance(value, (list, tuple)):
        items = [clean_deep(v, limit) for v in value]
        if all(a is b for a, b in zip(items, value)):
            return value
        if isinstance(value, list):
            return items
        return type(value)(*items) if hasattr(value, "_fields") else type(value)(items)
    if isinstance(value, dict):
        changed = {clean_deep(k, limit): clean_deep(v, limit) for k, v in value.items()}
        if all(k in value and value[k] is v for k, v in changed.items()):
            return value
        return changed
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        updates = {}
        for f in dataclasses.fields(value):
            old = getattr(value, f.name, None)
            new = clean_deep(old, limit)
            if new is not old:
                updates[f.name] = new
        if not updates:
            return value
        copy = _copy.copy(value)
        for name, new in updates.items():
            object.__setattr__(copy, name, new)  # frozen dataclasses too
        return copy
    return value
