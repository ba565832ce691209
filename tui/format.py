"""Small text formatters shared by the screens (addresses, sizes, times, durations)."""

from __future__ import annotations

import time
from typing import Any

STATUS_STYLE = {
    "ok": "green",
    "running": "yellow",
    "error": "red",
    "crashed": "bold red",
    "hung": "bold red",
    "interrupted": "yellow",
}
SEVERITY_STYLE = {"error": "bold red", "warning": "yellow", "info": "cyan"}
PHASE_COLOR = {"eager": "grey58", "prep": "dodger_blue1", "capture": "orange1", "replay": "green3"}


def hexaddr(address: int | None) -> str:
    return "-" if address is None else f"0x{address:x}"


def addr_range(address: int, size: int) -> str:
    """Half-open range, as the allocator reasons about it."""
    return f"[0x{address:x}, 0x{address + size:x})"


def size_text(size: int | None) -> str:
    if size is None:
        return "-"
    for unit, scale in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= scale and size % (scale // 4) == 0:
            return f"{size / scale:g} {unit}"
    return f"{size} B"


def when(ts: float | None) -> str:
    return "-" if ts is None else time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(ts))


def duration(ns: int | None) -> str:
    if ns is None:
        return ""
    if ns < 1_000:
        return f"{ns} ns"
    if ns < 1_000_000:
        return f"{ns / 1_000:.1f} µs"
    if ns < 1_000_000_000:
        return f"{ns / 1_000_000:.1f} ms"
    return f"{ns / 1_000_000_000:.2f} s"


def site(file: str | None, line: int | None) -> str:
    if not file:
        return ""
    name = file.rsplit("/", 1)[-1]
    return f"{name}:{line}" if line is not None else name


_RANGE_KEYS = ("range", "address", "end", "size", "device", "buffer_type")


def _as_int(value: Any) -> int | None:
    """Addresses arrive as ints or as text like "0x101080 (1052800)"."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    try:
        return int(str(value).split()[0], 0)
    except (ValueError, IndexError):
        return None


def range_text(value: dict[str, Any]) -> str | None:
    """"[start, end) TYPE" for a dict that describes a buffer range, else None."""
    text = value.get("range")
    if text is None and "address" in value and "size" in value:
        address, size = _as_int(value["address"]), _as_int(value["size"])
        if address is not None and size is not None:
            text = addr_range(address, size)
    if text is None:
        return None
    return f"{text} {value['buffer_type']}" if value.get("buffer_type") else str(text)


def evidence_value(key: str, value: Any) -> str:
    """One line for a piece of evidence, whatever shape the analysis gave it."""
    if isinstance(value, dict):
        head = range_text(value)
        rest = {k: v for k, v in value.items() if head is None or k not in _RANGE_KEYS}
        parts = [f"{k}: {evidence_value(k, v)}" for k, v in rest.items() if k != "events"]
        return "; ".join(([head] if head else []) + parts)
    if isinstance(value, (list, tuple)):
        return "; ".join(evidence_value(key, v) for v in value)
    if "addr" in key.lower() and _as_int(value) is not None and isinstance(value, int):
        return hexaddr(value)
    return str(value)


def evidence_lines(evidence: dict[str, Any]) -> list[str]:
    """Evidence as lines: lists of ranges get one indented line each."""
    lines = []
    for key, value in evidence.items():
        if isinstance(value, (list, tuple)) and value and all(isinstance(v, dict) for v in value):
            lines.append(f"{key}:")
            lines += [f"  {evidence_value(key, v)}" for v in value]
        else:
            lines.append(f"{key}: {evidence_value(key, value)}")
    return lines
