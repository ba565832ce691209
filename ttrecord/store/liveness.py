"""Whether a session is being recorded right now, told by a lock rather than by its status.

`ttrecord run` writes the session's status as `running` at the start and the final status at
the end; a supervisor that is killed in between (a CI timeout's SIGKILL, an OOM kill, a power
cut) leaves `running` behind for good. So the supervisor also holds an exclusive `flock` on the
session's event log (`SESSION.db.log`) for as long as it records: the kernel drops the lock the
moment the process dies, however it dies. A session whose status is `running` while nobody
holds that lock stopped abnormally.
"""

from __future__ import annotations

import fcntl
import os
import stat
from pathlib import Path

LOG_SUFFIX = ".log"
LOG_MAGIC = b"TTRLOG01"  # bytes 8..16 of every log (see ttrecord/recorder/log.py)


def log_path(session: str | os.PathLike[str]) -> Path:
    """The event log beside a session file."""
    p = Path(session)
    return p.with_name(p.name + LOG_SUFFIX)


def lock_log(path: Path) -> int:
    """Open (creating) the log and take its exclusive lock; returns the fd holding it.
    Raises BlockingIOError when another process holds it."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW | os.O_NONBLOCK,
                 0o644)  # fmt: skip
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise IsADirectoryError(f"{path} is not a regular file")
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        raise
    return fd


def being_recorded(session: str | os.PathLike[str]) -> bool:
    """True while a live `ttrecord run` holds the lock on this session's log."""
    try:
        fd = os.open(log_path(session), os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return False  # a FIFO or device: no run records into it
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except OSError:
        return False
    finally:
        os.close(fd)  # closing drops a shared lock we may have taken
    return False


def is_ttrecord_log(path: Path) -> bool:
    """An empty file or one that starts like a ttrecord log (safe to replace)."""
    try:
        if path.is_symlink() or not stat.S_ISREG(os.stat(path).st_mode):
            return False
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOFOLLOW)
        try:
            head = os.pread(fd, 16, 0)
        finally:
            os.close(fd)
    except OSError:
        return False
    return len(head) == 0 or head[8:16] == LOG_MAGIC
