"""Call sites of native events: raw return addresses turned into `file:line` after the run.

The recorder stores return addresses and, once per module, where the module was loaded; here
each address becomes (function, file, line) with `addr2line -i -C -f` on `pc - 1` (the call
instruction, not the one after it), one addr2line process per module and batch, each address
looked up once. The call site of an event is its first frame outside the tt libraries (the
ttnn package's libraries, the recorder itself and the system's C/C++ runtime), so a read is
pinned to the line of the user's C++ that asked for it; the frames above it are its callers.
"""

from __future__ import annotations

import os
import subprocess
from bisect import bisect_right
from dataclasses import dataclass, field

Frame = tuple[str, int, str]  # (file, line, function), as events.CallSite.stack


@dataclass
class Module:
    base: int  # load bias: ELF address = runtime address - base
    lo: int
    hi: int
    path: str
    internal: bool
    from_python: bool  # ttnn's Python bindings: a call through them is the Python recorder's


_SYSTEM = ("/lib/", "/lib64/", "/usr/lib/", "/usr/lib64/", "linux-vdso", "linux-gate")


def is_internal(path: str) -> bool:
    """tt libraries, the recorder, and the C/C++ runtime: never the user's call site."""
    norm = os.path.normpath(path)
    base = os.path.basename(norm)
    return (
        base.startswith("libttrecord_native")
        or "/ttnn/" in norm
        or "/ttnn.libs/" in norm
        or base.startswith(("libtt_metal", "_ttnncpp", "libtt-umd", "libtt_stl", "libtracy"))
        or norm.startswith(_SYSTEM)
        or base.startswith(("libstdc++", "libgcc_s", "libc.so", "ld-linux"))
        or base.startswith(("python", "libpython"))  # the interpreter of a Python program
    )


@dataclass
class Symbolizer:
    modules: list[Module] = field(default_factory=list)
    _starts: list[int] = field(default_factory=list)
    _cache: dict[int, list[Frame]] = field(default_factory=dict)

    def add_module(self, base: int, lo: int, hi: int, path: str) -> None:
        if any(m.lo == lo for m in self.modules):
            return
        name = os.path.basename(path)
        self.modules.append(Module(base, lo, hi, path, is_internal(path),
                                   name.startswith("_ttnn.") and "cpython" in name))  # fmt: skip
        self.modules.sort(key=lambda m: m.lo)
        self._starts = [m.lo for m in self.modules]

    def module(self, pc: int) -> Module | None:
        i = bisect_right(self._starts, pc) - 1
        if i >= 0 and pc < self.modules[i].hi:
            return self.modules[i]
        return None

    def resolve(self, pcs: set[int]) -> None:
        """Look up every address not seen before, one addr2line run per module."""
        todo: dict[str, list[tuple[int, int]]] = {}
        for pc in pcs:
            if pc in self._cache:
                continue
            m = self.module(pc)
            if m is None:
                self._cache[pc] = [("??", 0, hex(pc))]
                continue
            todo.setdefault(m.path, []).append((pc, pc - 1 - m.base))
        for path, items in todo.items():
            for pc, frames in zip((p for p, _ in items), _addr2line(path, [o for _, o in items]),
                                  strict=False):  # fmt: skip
                self._cache[pc] = frames or [("??", 0, os.path.basename(path))]
            for pc, _ in items:
                self._cache.setdefault(pc, [("??", 0, os.path.basename(path))])

    def frames(self, pc: int) -> list[Frame]:
        return self._cache.get(pc) or [("??", 0, hex(pc))]


def _addr2line(path: str, offsets: list[int]) -> list[list[Frame]]:
    """Per offset, its frames innermost first (inlined functions expand into several)."""
    try:
        out = subprocess.run(["addr2line", "-e", path, "-a", "-i", "-C", "-f",
                              *(hex(o) for o in offsets)],
                             capture_output=True, text=True, timeout=60).stdout  # fmt: skip
    except (OSError, subprocess.TimeoutExpired):
        return []
    result: list[list[Frame]] = []
    lines = out.splitlines()
    i = 0
    while i < len(lines):
        if lines[i].startswith("0x"):
            result.append([])
            i += 1
            continue
        if not result or i + 1 >= len(lines):
            break
        function, where = lines[i], lines[i + 1]
        file, _, line = where.rpartition(":")
        line = line.split(" ", 1)[0]
        result[-1].append((file if file and file != "??" else "??",
                           int(line) if line.isdigit() else 0, function))  # fmt: skip
        i += 2
    return result
