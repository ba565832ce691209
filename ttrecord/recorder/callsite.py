"""Call sites: the first frame outside ttnn and ttrecord, found cheaply.

The walk starts at the recorder's wrapper and goes outwards with `sys._getframe`; whether a
code object belongs to ttnn/ttrecord is decided once per code object and cached, so a call
site costs a few dictionary lookups. Each distinct site (plus its short stack of callers) gets
a small integer id, defined once in the log with a SITE record.
"""

from __future__ import annotations

import functools
import itertools
import os
import sys
from types import CodeType, FrameType, ModuleType

from ttrecord.recorder.log import LogWriter
from ttrecord.recorder.records import new_site

_getframe = sys._getframe


def _function_name(code: CodeType) -> str:
    return getattr(code, "co_qualname", code.co_name)


class CallSites:
    """Finds and numbers call sites. `depth` is how many caller frames each site keeps."""

    def __init__(self, internal_dirs: list[str], depth: int, log: LogWriter,
                 hot: ModuleType | None = None) -> None:  # fmt: skip
        self._dirs = tuple(os.path.join(os.path.realpath(d), "") for d in internal_dirs)
        self._dirs += tuple(os.path.join(os.path.abspath(d), "") for d in internal_dirs)
        self.depth = depth
        self._log = log
        # Keyed by id(code): hashing a code object hashes its contents on every lookup. The
        # code objects are kept (in _codes) so an id is never reused while cached.
        self._internal: dict[int, bool] = {}
        self._codes: list[CodeType] = []
        self._ids: dict[tuple, int] = {}
        # The same, keyed by instruction offsets (f_lasti) instead of lines: reading f_lineno
        # decodes the line table, f_lasti is a field. Several offsets share a line and its id.
        self._by_offset: dict[tuple, int | None] = {}
        self._next_id = itertools.count(1)
        if hot is not None:  # the same walk in C (ext/hotpath.c), frame as the last argument
            self.here = functools.partial(  # type: ignore[method-assign]
                hot.here, self._internal, self.is_internal, self._by_offset, depth, self._miss)

    def _miss(self, f: FrameType, key: tuple) -> int | None:
        """The C walk's first sight of `key` (frame `f` is the call site)."""
        sid = self._by_offset[key] = self.site_id(f)
        return sid

    def is_internal(self, code: CodeType) -> bool:
        flag = self._internal.get(id(code))
        if flag is None:
            name = code.co_filename
            flag = name.startswith(self._dirs) or name.startswith("<frozen ")
            self._internal[id(code)] = flag
            self._codes.append(code)
        return flag

    def user_frame(self, skip: int = 2) -> FrameType | None:
        """The innermost frame outside ttnn and ttrecord (`skip` frames above the caller)."""
        f: FrameType | None = _getframe(skip)
        internal = self._internal
        while f is not None:
            flag = internal.get(id(f.f_code))
            if flag is None:
                flag = self.is_internal(f.f_code)
            if not flag:
                return f
            f = f.f_back
        return None

    def here(self, f: FrameType | None) -> int | None:
        """The call site id for a call made at frame `f` (or the first user frame outside it)."""
        internal = self._internal
        while f is not None:
            code = f.f_code
            flag = internal.get(id(code))
            if flag is None:
                flag = self.is_internal(code)
            if not flag:
                break
            f = f.f_back
        else:
            return None
        key: tuple = (id(code), f.f_lasti)
        depth = self.depth
        g = f.f_back
        while g is not None and depth:
            code = g.f_code
            flag = internal.get(id(code))
            if flag is None:
                flag = self.is_internal(code)
            if not flag:
                key += (id(code), g.f_lasti)
                depth -= 1
            g = g.f_back
        sid = self._by_offset.get(key)
        if sid is None:
            sid = self._by_offset[key] = self.site_id(f)
        return sid

    def site_id(self, f: FrameType | None) -> int | None:
        """The id of the call site at frame `f`, defining it in the log on first sight."""
        if f is None:
            return None
        # The key is the site plus its callers' (code, line): flat, built without calls.
        key: tuple = (id(f.f_code), f.f_lineno)
        depth = self.depth
        callers: list[FrameType] = []
        if depth:
            internal = self._internal
            g = f.f_back
            while g is not None and depth:
                code = g.f_code
                flag = internal.get(id(code))
                if flag is None:
                    flag = self.is_internal(code)
                if not flag:
                    key += (id(code), g.f_lineno)
                    callers.append(g)
                    depth -= 1
                g = g.f_back
        sid = self._ids.get(key)
        if sid is not None:
            return sid
        sid = next(self._next_id)
        self._ids[key] = sid
        self._codes.append(f.f_code)
        self._codes.extend(c.f_code for c in callers)
        stack = tuple((c.f_code.co_filename, c.f_lineno, _function_name(c.f_code)) for c in callers)
        self._log.defer(new_site(site_id=sid, file=f.f_code.co_filename, line=f.f_lineno,
                                 function=_function_name(f.f_code), stack=stack))
        return sid
