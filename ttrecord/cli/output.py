"""One policy for every file or folder a command writes with `-o` (and replaces with `-f`).

- never the input: the session being read (or its log, -wal, -shm) is never the output;
- never through a symbolic link: a link at the output path (dangling or not) is refused, so a
  write cannot land in another folder;
- never truncated before success: the output is written to a temporary file beside it and
  renamed over the old one only when the command succeeded, so a failing command leaves an
  existing file as it was;
- `-f` replaces only what ttrecord wrote, recognised by its content (a report, findings, a
  trace, a visualizer folder); never a session, another SQLite file, or a user's file.
"""

from __future__ import annotations

import json
import os
import re
import stat
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from ttrecord.errors import TtrecordError

_SQLITE = b"SQLite format 3\x00"
# What ttrecord's outputs hold near their start: its name, a rule id or "trace hazard" (check
# text), the shape of its JSON (check/report JSON, Perfetto trace).
_OURS = re.compile(rb"ttrecord|[Tt]race hazards?|\bTR0\d\d\b|\A\{\"traceEvents\":\["
                   rb"|\A\{\s*\"version\": \d+,\s*\"session\": ")  # fmt: skip
_HEAD, _TAIL = 64 << 10, 4 << 10
VISUALIZER_FILES = frozenset({"db.sqlite", "config.json"})


def _read_ends(path: Path) -> tuple[bytes, bytes]:
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        size = os.fstat(fd).st_size
        return os.pread(fd, _HEAD, 0), os.pread(fd, _TAIL, max(0, size - _TAIL))
    finally:
        os.close(fd)


def made_by_ttrecord(path: Path) -> bool:
    """Whether a regular file is one of ttrecord's text outputs (never a session)."""
    try:
        if not stat.S_ISREG(os.lstat(path).st_mode):
            return False
        head, tail = _read_ends(path)
    except OSError:
        return False
    if head.startswith(_SQLITE):
        return False
    return bool(_OURS.search(head)) or b"ttrecord" in tail


def visualizer_folder(folder: Path) -> bool:
    """Whether a folder holds only a ttrecord visualizer export (db.sqlite, config.json naming
    the session it came from)."""
    try:
        names = set(os.listdir(folder))
        if not names <= VISUALIZER_FILES:
            return False
        if any(os.path.islink(folder / n) for n in names):
            return False
        if "config.json" not in names:
            return False
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(config, dict) and "ttrecord_session" in config


def _same(a: Path, b: Path) -> bool:
    try:
        if os.path.realpath(a) == os.path.realpath(b):
            return True
        return a.exists() and b.exists() and os.path.samefile(a, b)
    except OSError:
        return False


def _inputs_and_sides(inputs: Sequence[str | os.PathLike[str]]) -> list[Path]:
    out = []
    for item in inputs:
        p = Path(item)
        out += [p, *(p.with_name(p.name + s) for s in ("-wal", "-shm", "-journal", ".log"))]
    return out


def check_output(out: str | os.PathLike[str], *, inputs: Sequence[str | os.PathLike[str]],
                 force: bool, kind: str = "file") -> Path:  # fmt: skip
    """Refuse an output path the policy forbids (TtrecordError, one line); returns it."""
    path = Path(out)
    if os.path.islink(path):
        raise TtrecordError(f"{path}: is a symbolic link; not followed (give the path it"
                            " points to)")  # fmt: skip
    for source in _inputs_and_sides(inputs):
        if _same(path, source):
            raise TtrecordError(f"{path}: is the session being read (or a file of it); choose"
                                " another output")  # fmt: skip
    parent = path.absolute().parent
    if not parent.is_dir():
        raise TtrecordError(f"{parent}: no such folder")
    if kind == "folder":
        if path.exists() and not path.is_dir():
            raise TtrecordError(f"{path}: is a file; give a folder with -o")
        if path.is_dir() and any(path.iterdir()):
            if not force:
                raise TtrecordError(f"{path}: folder is not empty (use --force to replace the"
                                    " report)")  # fmt: skip
            if not visualizer_folder(path):
                raise TtrecordError(f"{path}: holds files ttrecord did not write; not replaced"
                                    " (choose an empty or new folder)")  # fmt: skip
        return path
    if path.is_dir():
        raise TtrecordError(f"{path}: is a folder; give a file name with -o")
    if os.path.lexists(path):
        if not force:
            raise TtrecordError(f"{path}: already exists (use --force to replace it)")
        mode = os.lstat(path).st_mode
        if not stat.S_ISREG(mode):
            raise TtrecordError(f"{path}: is not a regular file; not replaced")
        try:
            head, _ = _read_ends(path)
        except OSError as exc:
            raise TtrecordError(f"{path}: cannot be read ({exc.strerror})") from None
        if head.startswith(_SQLITE):
            raise TtrecordError(f"{path}: is an SQLite database (a session?); never replaced"
                                " by an output")  # fmt: skip
        if not made_by_ttrecord(path):
            raise TtrecordError(f"{path}: was not written by ttrecord; not replaced (remove it"
                                " or choose another name)")  # fmt: skip
    return path


def _temp_name(path: Path, suffix: str = ".tmp") -> Path:
    return path.with_name(f".{path.name}.ttrecord-{uuid.uuid4().hex[:12]}{suffix}")


@contextmanager
def replaced_on_success(path: Path) -> Iterator[Path]:
    """A fresh temporary path beside `path`; renamed over `path` when the block ends without
    an exception, removed otherwise (the old file stays as it was)."""
    temp = _temp_name(path)
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                 0o666)  # fmt: skip
    os.close(fd)
    try:
        yield temp
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
    if os.path.islink(path):  # made a link while we wrote: refuse rather than follow
        temp.unlink(missing_ok=True)
        raise TtrecordError(f"{path}: became a symbolic link; not written")
    os.replace(temp, path)


@contextmanager
def folder_replaced_on_success(folder: Path) -> Iterator[Path]:
    """A fresh temporary folder beside `folder`; on success its files move into `folder`
    (created if missing), replacing the ones of an earlier export; removed on failure."""
    temp = _temp_name(folder, ".d")
    temp.mkdir()
    try:
        yield temp
    except BaseException:
        _remove_tree(temp)
        raise
    try:
        if not os.path.lexists(folder):
            os.rename(temp, folder)
            return
        for name in os.listdir(temp):
            os.replace(temp / name, folder / name)
    finally:
        _remove_tree(temp)


def _remove_tree(folder: Path) -> None:
    if not folder.is_dir() or folder.is_symlink():
        return
    for name in os.listdir(folder):
        (folder / name).unlink(missing_ok=True)
    folder.rmdir()
