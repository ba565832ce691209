"""Builds the native recorder for the installed tt-metal library, once, and finds it again.

The library is compiled with the system C++ compiler the first time it is needed (or by
`ttrecord native doctor --build`, the install step) and cached under
`$XDG_CACHE_HOME/ttrecord/native/<key>/`, the key hashing the tt-metal library's GNU build id,
the recorder's source and the role table: a new tt-metal wheel or a new ttrecord gets a new
build, and an unchanged one costs a stat. Without a compiler, `NativeUnavailable` says why in
one line (the Python recorder does not need any of this).
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ttrecord.errors import TtrecordError
from ttrecord.native import roles

SOURCE = Path(__file__).with_name("recorder.cpp")
LIBRARY_NAME = "libttrecord_native.so"


class NativeUnavailable(TtrecordError):
    """The native recorder cannot be built or used here (the message says why)."""


@dataclass(frozen=True)
class Built:
    library: Path  # the preloadable recorder
    tt_metal: Path  # the tt-metal library it was built for
    build_id: str
    found: dict[str, str]  # role macro -> mangled symbol
    missing: list[str]  # role macros not found
    buffer_layout: dict[str, int] | None
    lacking_buffer: str | None


def tt_metal_library() -> Path:
    """The libtt_metal.so to hook: $TTRECORD_TT_METAL_LIB, else the one in the installed ttnn
    package (found without importing ttnn)."""
    given = os.environ.get("TTRECORD_TT_METAL_LIB")
    if given:
        path = Path(given)
        if not path.is_file():
            raise NativeUnavailable(f"--native cannot run: TTRECORD_TT_METAL_LIB={given}: no such"
                                    " file")  # fmt: skip
        return path
    try:
        spec = importlib.util.find_spec("ttnn")
    except (ImportError, ValueError):
        spec = None
    if spec is None or not spec.submodule_search_locations:
        raise NativeUnavailable("--native cannot run: no ttnn package is installed for this"
                                " Python, so there is no libtt_metal.so to hook (set"
                                " TTRECORD_TT_METAL_LIB)")  # fmt: skip
    for folder in spec.submodule_search_locations:
        path = Path(folder) / "build" / "lib" / "libtt_metal.so"
        if path.is_file():
            return path
    raise NativeUnavailable("--native cannot run: the installed ttnn package has no"
                            " build/lib/libtt_metal.so")  # fmt: skip


def build_id(library: Path) -> str:
    """The library's GNU build id (its content hash when it has none)."""
    try:
        out = subprocess.run(["readelf", "-n", str(library)], capture_output=True, text=True,
                             check=True).stdout  # fmt: skip
        m = re.search(r"Build ID:\s*([0-9a-f]+)", out)
        if m:
            return m.group(1)
    except (OSError, subprocess.CalledProcessError):
        pass
    h = hashlib.sha256()
    with library.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return "sha256-" + h.hexdigest()[:32]


def compiler() -> str | None:
    given = os.environ.get("CXX")
    if given:
        return shutil.which(given)
    return shutil.which("g++") or shutil.which("c++")


def _cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "ttrecord" / "native"


def _key(bid: str) -> str:
    h = hashlib.sha256(bid.encode())
    h.update(SOURCE.read_bytes())
    h.update(Path(roles.__file__).read_bytes())
    return h.hexdigest()[:20]


def _tools_missing() -> str | None:
    for tool in ("nm", "c++filt", "objdump", "readelf"):
        if shutil.which(tool) is None:
            return f"`{tool}` (binutils) is not installed"
    return None


def compile_recorder(cxx: str, header: str, out: Path) -> None:
    """Compile recorder.cpp with `header` (roles.h) into the shared library `out`."""
    roles_h = out.with_name("roles.h")
    roles_h.write_text(header)
    cmd = [cxx, "-std=c++17", "-O2", "-g", "-shared", "-fPIC", "-include", str(roles_h),
           "-o", str(out), str(SOURCE), "-ldl", "-pthread"]  # fmt: skip
    try:
        done = subprocess.run(cmd, capture_output=True, text=True)
    except OSError as exc:
        raise NativeUnavailable(f"--native cannot run: {cxx}: {exc.strerror}") from None
    if done.returncode != 0:
        first = next((ln for ln in done.stderr.splitlines() if "error" in ln),
                     done.stderr.strip().splitlines()[0] if done.stderr.strip() else "(no output)")
        raise NativeUnavailable(f"--native cannot run: building the native recorder failed:"
                                f" {first}")  # fmt: skip


def ensure_built(library: Path | None = None) -> Built:
    """The recorder built for `library` (default: the installed one), compiling it if needed."""
    tt = library or tt_metal_library()
    why = _tools_missing()
    if why:
        raise NativeUnavailable(f"--native cannot run: {why}")
    bid = build_id(tt)
    folder = _cache_root() / _key(bid)
    lib, meta = folder / LIBRARY_NAME, folder / "roles.json"
    if lib.is_file() and meta.is_file():
        info = json.loads(meta.read_text())
        return Built(lib, tt, bid, info["found"], info["missing"], info["buffer_layout"],
                     info["lacking_buffer"])  # fmt: skip
    cxx = compiler()
    if cxx is None:
        raise NativeUnavailable("--native cannot run: no C++ compiler (g++) is installed to"
                                " build the native recorder (the Python recorder needs none)")  # fmt: skip
    res = roles.resolve(tt)
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=folder) as tmp:
        out = Path(tmp) / LIBRARY_NAME
        compile_recorder(cxx, roles.header(res), out)
        info = {"found": res.found, "missing": res.missing, "buffer_layout": res.buffer_layout,
                "lacking_buffer": res.lacking_buffer, "tt_metal": str(tt), "build_id": bid}  # fmt: skip
        os.replace(out, lib)  # atomic: a concurrent build of the same key is identical
        (Path(tmp) / "roles.json").write_text(json.dumps(info, indent=1))
        os.replace(Path(tmp) / "roles.json", meta)
    return Built(lib, tt, bid, res.found, res.missing, res.buffer_layout, res.lacking_buffer)
