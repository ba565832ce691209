"""What damaged session contents raise inside the readers.

A session file can be structurally sound SQLite and still hold cells no ttrecord wrote: bad
JSON, unknown enum values, NULLs, text in integer columns, blobs, huge numbers. Checking every
cell on every read would cost the readers their speed, so the readers trust the cells, and the
command line turns whatever such a cell raises into one line (exit 2) instead of a traceback.
These are the exception types that can come out of decoding a bad cell.
"""

from __future__ import annotations

import sqlite3

DAMAGE: tuple[type[BaseException], ...] = (
    sqlite3.Error,
    ValueError,  # json, enum values, int(), UnicodeDecodeError
    TypeError,  # None or a blob where a number or text was expected
    KeyError,
    IndexError,
    AttributeError,
    OverflowError,  # huge timestamps
    ZeroDivisionError,
    RecursionError,  # deeply nested JSON
)


def describe(exc: BaseException) -> str:
    """One line saying what was wrong with a cell."""
    text = str(exc).splitlines()[0] if str(exc) else ""
    return f"damaged session contents ({type(exc).__name__}{': ' + text[:200] if text else ''})"
