"""The native recorder's binary log, as recorder.cpp writes it (`struct Rec` there).

A log is one file per recording process, `<prefix>.<pid>`: a 64-byte header (magic
b"TTRNAT01", the committed end offset as a little-endian u64, the pid, flags: bit 0 = audit)
and then records, each a 72-byte head (size, type, role, seq, parent, t_ns since the recorder started, tid, frame count,
text length, four role-specific values), the raw return addresses of its stack and its text
(an exception message, a module path). The writer copies a record in and then moves the
committed end past it, so a reader never sees a half-written record, and a process killed at
any point leaves every record before it readable.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from dataclasses import dataclass
from enum import IntEnum

MAGIC = b"TTRNAT01"
HEADER_SIZE = 64
_HEAD = struct.Struct("<IHHQQQIHH4Q")
FLAG_AUDIT = 1
assert _HEAD.size == 72


class RecType(IntEnum):
    BEGIN = 1
    END = 2
    POINT = 3
    MODULE = 4
    TERMINATE = 5


@dataclass(frozen=True, slots=True)
class NativeRecord:
    type: RecType
    role: int
    seq: int
    parent: int
    t_ns: int
    tid: int
    values: tuple[int, int, int, int]
    frames: tuple[int, ...]
    text: str


class NativeLogReader:
    """Reads complete records from one process's log while that process may still append."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._pos = HEADER_SIZE
        self.pid: int | None = None
        self.audit = False

    def read(self) -> Iterator[NativeRecord]:
        try:
            with open(self.path, "rb") as fh:
                head = fh.read(HEADER_SIZE)
                if len(head) < HEADER_SIZE or head[:8] != MAGIC:
                    return
                (end,) = struct.unpack_from("<Q", head, 8)
                self.pid, flags = struct.unpack_from("<qQ", head, 16)
                self.audit = bool(flags & FLAG_AUDIT)
                if end <= self._pos:
                    return
                fh.seek(self._pos)
                data = fh.read(end - self._pos)
        except OSError:
            return
        pos = 0
        while pos + _HEAD.size <= len(data):
            size, typ, role, seq, parent, t_ns, tid, nframes, textlen, *values = _HEAD.unpack_from(data, pos)
            if size < _HEAD.size or pos + size > len(data):
                break
            body = pos + _HEAD.size
            frames = struct.unpack_from(f"<{nframes}Q", data, body) if nframes else ()
            tpos = body + 8 * nframes
            text = data[tpos : tpos + textlen].decode("utf-8", "replace")
            try:
                kind = RecType(typ)
            except ValueError:
                kind = None
            if kind is not None:
                yield NativeRecord(kind, role, seq, parent, t_ns, tid, (values[0], values[1], values[2], values[3]), frames,
                                   text)  # fmt: skip
            pos += size
        self._pos += pos
