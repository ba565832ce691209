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


def evidence_value(key: str, value: Any) -> str:
    """Show addresses in hex and buffer-like dicts as ranges, whatever shape the analysis used."""
    if isinstance(value, dict) and "address" in value and "size" in value:
        parts = [addr_range(int(value["address"]), int(value["size"]))]
        extra = [f"{k}={v}" for k, v in value.items() if k not in ("address", "size")]
        return " ".join(parts + extra)
    if isinstance(value, dict):
        return ", ".join(f"{k}: {evidence_value(k, v)}" for k, v in value.items())
    if isinstance(value, (list, tuple)):
        if len(value) == 2 and all(isinstance(v, int) for v in value) and "addr" in key.lower():
            return f"[0x{value[0]:x}, 0x{value[1]:x})"
        return ", ".join(evidence_value(key, v) for v in value)
    if isinstance(value, int) and not isinstance(value, bool) and "addr" in key.lower():
        return hexaddr(value)
    return str(value)
