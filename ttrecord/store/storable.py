"""Text that SQLite can hold, from strings that may carry undecodable bytes.

File names, argv and messages reach the recorder as Python decodes them from the operating
system: bytes that are not UTF-8 become lone surrogates (`surrogateescape`), which SQLite's
UTF-8 cannot hold. Such text is stored with each undecodable byte written as `\\xNN`, so a path
like b"caf\\xe9/model.py" reads back as "caf\\xe9/model.py"; valid text is stored unchanged.
"""

from __future__ import annotations

from typing import Any


def storable(value: Any) -> Any:
    """`value` itself unless it is a str SQLite cannot encode; then its escaped form."""
    if type(value) is not str or value.isascii():
        return value
    try:
        value.encode("utf-8")
        return value
    except UnicodeEncodeError:
        pass
    try:
        raw = value.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # surrogates that are not escaped bytes
        return value.encode("utf-8", "backslashreplace").decode("utf-8")
    return raw.decode("utf-8", "backslashreplace")


def storable_fields(fields: dict[str, Any]) -> dict[str, Any]:
    """Every str value of a row made storable."""
    return {k: storable(v) for k, v in fields.items()}
