"""Writes a long JSON array in chunks through the C encoder, in constant memory.

`json.dump` to a file goes through json's pure-Python encoder (only `json.dumps` of a whole
value uses the C one) and `json.dumps` of a whole document holds it twice in memory. Encoding
a few thousand items at a time with `json.dumps` and writing each chunk gives the very bytes
`json.dump` would (same encoder options, same float repr), at less than half the CPU, holding
one chunk at a time.
"""

from __future__ import annotations

import json
from typing import Any, TextIO

CHUNK = 4096  # items per json.dumps call


class ArrayWriter:
    """The items of one JSON array, written as they come: `add(item)`, then `close()`.

    The caller writes what surrounds the array (the opening key, the closing bracket's
    parent); the writer writes `[`, the items separated as `json.dumps` separates them, `]`."""

    def __init__(self, out: TextIO, separators: tuple[str, str] = (",", ":"), default: Any = None,
                 chunk: int | None = None) -> None:  # fmt: skip
        self._out = out
        self._separators = separators
        self._default = default
        self._chunk = chunk or CHUNK
        self._pending: list[Any] = []
        self._first = True
        self.count = 0
        out.write("[")

    def add(self, item: Any) -> None:
        self._pending.append(item)
        if len(self._pending) >= self._chunk:
            self._flush()

    def extend(self, items: list[Any]) -> None:
        """Write these items (one chunk) after what was pending."""
        self._pending.extend(items)
        self._flush()

    def _flush(self) -> None:
        if not self._pending:
            return
        text = json.dumps(self._pending, separators=self._separators, default=self._default)
        if not self._first:
            self._out.write(self._separators[0])
        self._out.write(text[1:-1])
        self._first = False
        self.count += len(self._pending)
        self._pending.clear()

    def close(self) -> None:
        self._flush()
        self._out.write("]")
