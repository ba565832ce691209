"""The crash-safe event log between the recorded program and the supervisor.

The child process appends records with `os.write` straight into the kernel: nothing sits in a
user-space buffer while control is inside ttnn, so a segfault, an abort or `os._exit` in native
code loses nothing already written. Records produced after a call (its end, the buffers it
allocated) wait in memory and go out together with the next "call begins" record, so each
call costs one system call and one `marshal.dumps`.

Format: a sequence of frames, each a 4-byte little-endian length followed by that many bytes
of `marshal` data: a record (a tuple whose first item is a one-letter record type, see
RecordType) or a list of records written together. A truncated last frame (the writer died
mid-write) is ignored by the reader.
"""

from __future__ import annotations

import marshal
import os
import struct
import sys
import threading
from collections.abc import Iterator

_LEN = struct.Struct("<I")
_dumps = marshal.dumps
_pack = _LEN.pack


class RecordType:
    """First item of every record tuple. Field order is documented at each producer."""

    HEADER = "H"  # (H, backend, backend_reason, ttnn_version, pid)
    SITE = "S"  # (S, site_id, file, line, function, stack)
    BEGIN = "B"  # (B, seq, parent, t_ns, thread, kind, name, phase, device, cq, trace,
    #               site_id, args, inputs, region)
    END = "E"  # (E, seq, t_ns, status, error, outputs, device, trace)
    POINT = "P"  # (P, seq, parent, t_ns, thread, kind, name, phase, device, trace, site_id,
    #               args, region, buffer)  -- alloc/free/warning/region events
    EXCEPTION = "X"  # (X, type, message, traceback)
    EXIT = "Z"  # (Z, exit_code)


def encode(record: tuple) -> bytes:
    data = _dumps(record)
    return _pack(len(data)) + data


def _frame(records: list[tuple]) -> tuple[bytes, int]:
    """One frame holding `records`, and how many of them marshal refused (a stray object in
    a record's arguments): those are dropped, each of the others gets a frame of its own."""
    try:
        data = _dumps(records[0] if len(records) == 1 else records)
    except ValueError:
        good = []
        for record in records:
            try:
                good.append(encode(record))
            except ValueError:
                pass
        return b"".join(good), len(records) - len(good)
    return _pack(len(data)) + data, 0


class LogWriter:
    """Appends records to the log file; thread-safe, one `os.write` per durable point.

    Deferred records are kept as tuples (they are made of immutable values) and marshalled in
    one go with the next written record.
    """

    def __init__(self, path: str) -> None:
        self.fd: int | None = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        self._pending: list[tuple] = []
        self._lock = threading.Lock()
        self.dropped = 0  # records marshal refused

    def defer(self, record: tuple) -> None:
        """Queue a record; it reaches the file with the next `write` or `flush`."""
        with self._lock:
            self._pending.append(record)

    def defer_many(self, records: list[tuple]) -> None:
        with self._lock:
            self._pending.extend(records)

    def write(self, record: tuple) -> None:
        """Write the queued records and this one now, in one system call."""
        with self._lock:
            if self.fd is None:
                return
            pending = self._pending
            pending.append(record)
            self._write_locked(pending)

    def flush(self) -> None:
        with self._lock:
            self._flush_locked()

    def flush_from_signal_handler(self) -> None:
        """Flush unless this thread was interrupted while holding the lock (that write is
        about to complete on its own; blocking here would deadlock)."""
        if self._lock.acquire(blocking=False):
            try:
                self._flush_locked()
            finally:
                self._lock.release()

    def detach(self) -> None:
        """Stop writing (in a forked child: the queued records are the parent's to write)."""
        self._lock = threading.Lock()  # the parent's lock may have been held at fork time
        self._pending.clear()
        self.fd = None

    def _flush_locked(self) -> None:
        if self._pending and self.fd is not None:
            self._write_locked(self._pending)

    def _write_locked(self, pending: list[tuple]) -> None:
        chunk, dropped = _frame(pending)
        pending.clear()
        if chunk:
            os.write(self.fd, chunk)
        if dropped:
            self.dropped += dropped
            if self.dropped == dropped:  # the first time only
                print("ttrecord: recorder error: a log record holds an object marshal cannot "
                      "write; it is dropped, recording continues", file=sys.stderr)  # fmt: skip

    def close(self) -> None:
        self.flush()
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


class LogReader:
    """Reads complete records from a log that another process is still appending to."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._fh = None
        self._rest = b""
        self.more = False  # the last read stopped at max_bytes: call again

    def read(self, max_bytes: int = 16 << 20) -> Iterator[tuple]:
        """Complete records written since the last call (reading at most `max_bytes`)."""
        if self._fh is None:
            try:
                self._fh = open(self.path, "rb")  # noqa: SIM115 - kept open while tailing
            except FileNotFoundError:
                return
        chunk = self._fh.read(max_bytes)
        self.more = len(chunk) == max_bytes
        data = self._rest + chunk
        pos, end = 0, len(data)
        while pos + 4 <= end:
            (size,) = _LEN.unpack_from(data, pos)
            if pos + 4 + size > end:
                break
            try:
                record = marshal.loads(data[pos + 4 : pos + 4 + size])
            except (ValueError, EOFError, TypeError):
                # A damaged record: nothing after it can be trusted.
                self._rest = b""
                pos = end
                break
            pos += 4 + size
            if type(record) is list:  # records written together
                yield from record
            else:
                yield record
        self._rest = data[pos:]

    @property
    def truncated_bytes(self) -> int:
        """Bytes of an incomplete last record (non-zero only if the writer died mid-write)."""
        return len(self._rest)

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
