"""The crash-safe event log between the recorded program and the supervisor.

The child process appends records into a shared memory mapping of the log file (MAP_SHARED):
the pages belong to the kernel's page cache, so a segfault, an abort, `os._exit` or SIGKILL
loses nothing already copied in, exactly like data given to `write`, and an append costs a
memory copy instead of a system call. Records produced after a call (its end, the buffers it
allocated) wait in memory and go out together with the next "call begins" record, so each
call costs one `marshal.dumps` and one copy, made before control enters ttnn.

Format: a 16-byte header (the committed end offset as a little-endian u64, then the magic
b"TTRLOG01"), then a sequence of frames, each a 4-byte little-endian length followed by that
many bytes of `marshal` data: a record (a plain tuple whose first item is a one-letter tag;
every kind's fields are declared in records.py) or a list of records written together. The writer copies a frame in, then
moves the committed offset past it; the reader reads only up to that offset, so the zeroed
room the file is grown by is never mistaken for records. A truncated last frame is ignored.

Storage faults never reach the program: the file's blocks are reserved (`posix_fallocate`)
before the mapping grows over them, so a full disk (or a file-size limit) is an error returned
to the writer, never a SIGBUS when the program touches a page with no block behind it. The
last RESERVE bytes of the mapping are kept free for one STOPPED record saying why recording
stopped; after it the writer drops everything and the program runs on unrecorded.
"""

from __future__ import annotations

import errno
import marshal
import mmap
import os
import struct
import sys
import threading
from collections.abc import Callable, Iterator
from types import ModuleType

from ttrecord.recorder.mapping import OwnedFile, SharedMapping
from ttrecord.recorder.records import RecordType, new_stopped

__all__ = ["LogReader", "LogWriter", "RecordType", "encode"]

_LEN = struct.Struct("<I")
_END = struct.Struct("<Q")
_dumps = marshal.dumps
_pack = _LEN.pack
MAGIC = b"TTRLOG01"
HEADER_SIZE = 16
_INITIAL_SIZE = 1 << 20
# Written pages stay mapped (and counted in the child's RSS: +105 MB at 810k events) until
# released; MADV_DONTNEED on a shared file mapping only unmaps them, the data stays in the file.
_RELEASE_EVERY = 2 << 20

RESERVE = 4096  # kept free at the end of the mapping for the STOPPED record
_NO_FALLOCATE = {errno.EOPNOTSUPP, errno.ENOSYS, errno.EINVAL}


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
    """Appends records to the log file; thread-safe, one copy into the mapping per durable
    point. The file is mapped at the first write (so a log with only deferred records is still
    empty) and grown by doubling.

    Deferred records are kept as tuples (they are made of immutable values) and marshalled in
    one go with the next written record.

    The descriptor and the mapping are the writer's own (see mapping.py): the descriptor is
    checked by inode before the file grows or shrinks, and a program that closed or reused it
    stops the recording with that reason, never gets a write.
    """

    def __init__(self, path: str | bytes) -> None:
        self.stopped: str | None = None  # why recording stopped (disk full, ...)
        try:
            self._file = OwnedFile(path)
        except OSError as exc:  # the program runs anyway, unrecorded
            self._file = OwnedFile.unopened()
            self.stopped = f"cannot open the event log ({exc.strerror or exc})"
            print(f"ttrecord: recording stopped: {self.stopped}; the program continues"
                  " unrecorded", file=sys.stderr)  # fmt: skip
        self._mapping: SharedMapping | None = None
        self._map: memoryview | None = None  # the mapping's bytes
        self._end = HEADER_SIZE  # committed end offset
        self._pending: list[tuple] = []
        self._lock = threading.Lock()
        self.dropped = 0  # records marshal refused
        self._released = mmap.PAGESIZE  # pages below this offset were released (not page 0)
        self._hot: ModuleType | None = None  # the C hot path (hot_path.py), if chosen

    def use_hot_path(self, module: ModuleType | None) -> None:
        """Frame and copy records with the C extension's `append` (same bytes, fewer steps)."""
        self._hot = module

    @property
    def fd(self) -> int | None:
        return self._file.fd

    def defer(self, record: tuple) -> None:
        """Queue a record; it reaches the file with the next `write` or `flush`."""
        with self._lock:
            self._pending.append(record)

    def defer_many(self, records: list[tuple]) -> None:
        with self._lock:
            self._pending.extend(records)

    def write(self, record: tuple) -> None:
        """Write the queued records and this one now, in one copy."""
        with self._lock:
            if self._file.fd is None or self.stopped is not None:
                return
            pending = self._pending
            pending.append(record)
            self._write_locked(pending)

    def write_many(self, records: list[tuple]) -> None:
        """Write the queued records and these now, in one copy."""
        with self._lock:
            if self._file.fd is None or self.stopped is not None:
                return
            pending = self._pending
            pending.extend(records)
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
        """Stop writing (in a forked child: the queued records and the mapping are the
        parent's)."""
        self._lock = threading.Lock()  # the parent's lock may have been held at fork time
        self._pending.clear()
        if self._mapping is not None:
            self._mapping.forget()  # the parent's shared mapping: never unmapped here
        self._mapping = None
        self._map = None
        self._file.forget()

    def _flush_locked(self) -> None:
        if self._pending and self._file.fd is not None and self.stopped is None:
            self._write_locked(self._pending)

    def _write_locked(self, pending: list[tuple]) -> None:
        hot = self._hot
        if hot is not None and self._map is not None:
            try:
                end = hot.append(self._map, self._end, RESERVE, pending, _dumps)
            except ValueError:  # a record marshal refuses: the path below drops it alone
                end = 0
            if end:
                pending.clear()
                start = self._end
                self._end = end
                if start - self._released >= _RELEASE_EVERY:
                    self._release_below(start)
                return
        chunk, dropped = _frame(pending)
        pending.clear()
        if chunk:
            self._append(chunk)
        if dropped:
            self.dropped += dropped
            if self.dropped == dropped:  # the first time only
                print("ttrecord: recorder error: a log record holds an object marshal cannot "
                      "write; it is dropped, recording continues", file=sys.stderr)  # fmt: skip

    def _append(self, chunk: bytes) -> None:
        m = self._map
        start = self._end
        end = start + len(chunk)
        if m is None or end + RESERVE > len(m):
            m = self._grow(end + RESERVE)
            if m is None:
                return  # recording stopped
        m[start:end] = chunk
        _END.pack_into(m, 0, end)  # commit: the reader may now read up to `end`
        self._end = end
        if start - self._released >= _RELEASE_EVERY:
            self._release_below(start)

    def _release_below(self, start: int) -> None:
        upto = start - start % mmap.PAGESIZE
        assert self._mapping is not None  # the map is its view
        self._mapping.release(self._released, upto - self._released)
        self._released = upto

    def _reserve(self, fd: int, start: int, size: int) -> None:
        """Give the file real blocks up to `size` (a sparse file would SIGBUS on a full disk)."""
        try:
            os.posix_fallocate(fd, start, size - start)
        except OSError as exc:
            if exc.errno not in _NO_FALLOCATE:
                raise
            os.ftruncate(fd, size)  # a file system without fallocate: best effort

    def _remap(self, size: int) -> memoryview:
        """Reserve the file's blocks up to `size` and map that much (the descriptor checked
        first: a program's file is never grown or mapped). Raises OSError."""
        reason = self._file.check()
        if reason is not None:
            raise _NotOurs(reason)
        fd = self._file.fd
        assert fd is not None
        old = self._mapping
        self._reserve(fd, old.size if old is not None else 0, size)
        mapping = SharedMapping(fd, size)
        if old is not None:
            old.close()
        self._mapping = mapping
        self._map = mapping.view
        return mapping.view

    def _grow(self, needed: int) -> memoryview | None:
        m = self._map
        size = max(_INITIAL_SIZE, 2 * len(m) if m is not None else 0)
        while size < needed:
            size *= 2
        try:
            first = m is None
            m = self._remap(size)
            if first:
                m[:HEADER_SIZE] = _END.pack(self._end) + MAGIC
        except _NotOurs as exc:
            self._stop(str(exc))
            return None
        except (OSError, ValueError) as exc:
            self._stop(f"the event log cannot grow to {size} bytes"
                       f" ({getattr(exc, 'strerror', None) or exc})")  # fmt: skip
            return None
        return m

    def _stop(self, reason: str) -> None:
        """Write the STOPPED record into the reserved room (if a mapping exists) and stop."""
        self.stopped = reason
        self._pending.clear()
        m = self._map
        if m is None and self._file.check() is None:
            try:  # not even the first megabyte: try for just the header and the reserve
                m = self._remap(HEADER_SIZE + RESERVE)
                m[:HEADER_SIZE] = _END.pack(self._end) + MAGIC
            except (OSError, ValueError):
                m = None
        if m is not None:
            frame = encode(new_stopped(reason=reason[:1000]))
            end = self._end + len(frame)
            if end <= len(m):
                m[self._end : end] = frame
                _END.pack_into(m, 0, end)
                self._end = end
        print(f"ttrecord: recording stopped: {reason}; the program continues unrecorded",
              file=sys.stderr)  # fmt: skip

    def close(self) -> None:
        self.flush()
        if self._file.fd is None:
            return
        if self._mapping is not None:
            self._mapping.close()
            self._mapping = None
            self._map = None
            if self._file.check() is None:
                os.ftruncate(self._file.fd, self._end)  # drop the unused room
        self._file.close()


class _NotOurs(OSError):
    """The log's descriptor was closed or reused by the program."""


class LogReader:
    """Reads complete records from a log that another process is still appending to.

    A log may be damaged (a disk error, a copy cut short, a file made by hand): a frame whose
    contents do not decode is skipped by its length and listed in `unreadable`; a frame whose
    length reaches past the committed end cannot be skipped, so reading stops there and the
    rest is listed too. Nothing read is trusted to size an allocation beyond the file.
    """

    def __init__(self, path: str | bytes) -> None:
        self.path = path
        self._fd: int | None = None
        self._pos = HEADER_SIZE
        self._rest = b""
        self.more = False  # the last read stopped at max_bytes: call again
        self.unreadable: list[tuple[int, int]] = []  # (offset, bytes) of damaged frames
        self.broken = False  # a frame length past the committed end: nothing after it reads
        self.committed = HEADER_SIZE  # the committed end the header gave last

    def _next(self, max_bytes: int) -> tuple[bytes, int, int] | None:
        """(data, file offset of data[0], committed end): the bytes committed since the last
        call after those of an incomplete frame kept from it; None when nothing can be read."""
        if self.broken:
            self.more = False
            return None
        if self._fd is None:
            try:
                self._fd = os.open(self.path, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK)
            except FileNotFoundError:
                return None
        head = os.pread(self._fd, HEADER_SIZE, 0)
        if len(head) < HEADER_SIZE or head[8:] != MAGIC:
            self.more = False
            return None  # nothing written yet
        (committed,) = _END.unpack_from(head)
        self.committed = committed
        want = min(committed - self._pos, max_bytes)
        chunk = os.pread(self._fd, want, self._pos) if want > 0 else b""
        base = self._pos - len(self._rest)  # file offset of data[0]
        self._pos += len(chunk)
        self.more = want == max_bytes and len(chunk) == want
        return self._rest + chunk, base, committed

    def read(self, max_bytes: int = 16 << 20) -> Iterator[tuple]:
        """Complete records committed since the last call (reading at most `max_bytes`)."""
        got = self._next(max_bytes)
        if got is None:
            return
        data, base, committed = got
        pos, end = 0, len(data)
        while pos + 4 <= end:
            (size,) = _LEN.unpack_from(data, pos)
            if base + pos + 4 + size > committed:  # a damaged length: no frame boundary after it
                self.unreadable.append((base + pos, committed - base - pos))
                self.broken = True
                self.more = False
                pos = end
                break
            if pos + 4 + size > end:
                break
            try:
                record = marshal.loads(data[pos + 4 : pos + 4 + size])
            except (ValueError, EOFError, TypeError, MemoryError, RecursionError):
                self.unreadable.append((base + pos, 4 + size))  # skip this frame only
                pos += 4 + size
                continue
            pos += 4 + size
            if type(record) is list:  # records written together
                yield from record
            else:
                yield record
        self._rest = data[pos:]

    def read_into(self, frames: Callable[[bytes, int, int], tuple[int, list, bool]],
                  max_bytes: int = 16 << 20) -> None:  # fmt: skip
        """`read` with the frame loop done by `frames(data, base, committed)` (the C pipeline,
        recorder/pipeline.py: the same frames decoded, the same ones listed as unreadable),
        which returns (bytes consumed, unreadable frames, whether a length was damaged)."""
        got = self._next(max_bytes)
        if got is None:
            return
        data, base, committed = got
        pos, unreadable, broken = frames(data, base, committed)
        self.unreadable.extend(unreadable)
        if broken:
            self.broken = True
            self.more = False
        self._rest = data[pos:]

    @property
    def truncated_bytes(self) -> int:
        """Bytes of an incomplete last record (non-zero only if the writer died mid-write)."""
        return len(self._rest)

    @property
    def truncated_at(self) -> int:
        """File offset of the incomplete last record."""
        return self._pos - len(self._rest)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
