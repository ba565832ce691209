"""The log's shared memory mapping and descriptor, owned so the program cannot take them over.

Python's `mmap.mmap` keeps a private `dup` of the file's descriptor at the lowest free number
and uses it for `resize` and `close`. A program that closes every descriptor above 2 and opens
its own files gets that number back, and the next `resize` truncates the program's file and
maps it. So the mapping is made with libc's `mmap` directly (nothing of it refers to a
descriptor once made), and the one descriptor the writer keeps is moved to a high number,
close-on-exec, and checked by inode (`fstat`) before every use: if the program closed or
replaced it, the writer stops instead of touching whatever the number now names.
"""

from __future__ import annotations

import ctypes
import fcntl
import mmap
import os
import resource

_libc = ctypes.CDLL(None, use_errno=True)
_mmap = _libc.mmap
_mmap.restype = ctypes.c_void_p
_mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                  ctypes.c_long]  # fmt: skip
_munmap = _libc.munmap
_munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
_madvise = _libc.madvise
_madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
_MAP_FAILED = ctypes.c_void_p(-1).value
_DONTNEED = getattr(mmap, "MADV_DONTNEED", None)

# Below the descriptor limit, far above what programs open: a program reusing numbers from the
# bottom (the usual case after closing everything) never lands here.
_HIGH_MARGIN = 64
_HIGH_CAP = 1 << 16


def _high_floor() -> int:
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY or soft > _HIGH_CAP:
        soft = _HIGH_CAP
    return max(3, soft - _HIGH_MARGIN)


class OwnedFile:
    """A descriptor opened close-on-exec, moved high, and re-identified before each use."""

    def __init__(self, path: str | bytes) -> None:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            high = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, _high_floor())
        except OSError:
            high = fd  # a descriptor limit too low to move it: the inode check still holds
        else:
            os.close(fd)
        st = os.fstat(high)
        self.fd: int | None = high
        self._identity = (st.st_dev, st.st_ino)

    @classmethod
    def unopened(cls) -> OwnedFile:
        """A writer's file that could not be opened: every use says so."""
        self = cls.__new__(cls)
        self.fd = None
        self._identity = (0, 0)
        return self

    def check(self) -> str | None:
        """None while the descriptor is still the log; else why it cannot be used."""
        if self.fd is None:
            return "the event log is closed"
        try:
            st = os.fstat(self.fd)
        except OSError:
            return "the program closed the event log's file descriptor"
        if (st.st_dev, st.st_ino) != self._identity:
            return "the program replaced the event log's file descriptor with a file of its own"
        return None

    def close(self) -> None:
        """Close the descriptor if it is still ours (never a number the program reused)."""
        if self.fd is not None and self.check() is None:
            os.close(self.fd)
        self.fd = None

    def forget(self) -> None:
        """Drop the descriptor without closing it (a forked child: it is the parent's)."""
        self.fd = None


class SharedMapping:
    """A MAP_SHARED read-write mapping of `size` bytes of a file, as a writable memoryview."""

    def __init__(self, fd: int, size: int) -> None:
        address = _mmap(None, size, mmap.PROT_READ | mmap.PROT_WRITE, mmap.MAP_SHARED, fd, 0)
        if address is None or address == _MAP_FAILED:
            err = ctypes.get_errno()
            raise OSError(err, os.strerror(err))
        self.address: int = address
        self.size = size
        self.view = memoryview((ctypes.c_char * size).from_address(address)).cast("B")

    def release(self, start: int, length: int) -> None:
        """Drop written pages from this process's memory (the data stays in the file)."""
        if _DONTNEED is not None and length > 0:
            _madvise(self.address + start, length, _DONTNEED)

    def close(self) -> None:
        if self.size:
            self.view.release()
            _munmap(self.address, self.size)
            self.size = 0

    def forget(self) -> None:
        """Stop using the mapping without unmapping it (a forked child shares the parent's)."""
        self.size = 0
