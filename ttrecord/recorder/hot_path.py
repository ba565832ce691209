"""Which hot path the recorder runs: the C extension (ext/hotpath.c) or pure Python.

The extension records the commonest calls whole (an eager op, and the replay loop's
`copy_host_to_device_tensor`, reads and `execute_trace`: `Recorder.call` in C, calling back into
Python only for first sights and the rarer branches), and gives the rest its pieces (framing
records into the shared log mapping, the call-site frame walk, the argument scan, tensor
descriptions); both paths record the same events.
It is compiled with the system C compiler against this Python's headers the first time it is
needed (or by scripts/setup) and cached under `$XDG_CACHE_HOME/ttrecord/hotpath/<key>/`, the
key hashing the source, the Python version and the machine: an unchanged install costs a stat.
Without a compiler (or headers) the pure-Python path runs and the session says why.
`TTRECORD_PURE_PYTHON=1` forces the pure-Python path. The choice is made once, at start, and
stored in the session's options (`hot_path`, `hot_path_reason`).

Run `python -m ttrecord.recorder.hot_path` to build it now (prints the choice).
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import os
import platform
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path
from types import ModuleType

SOURCE = Path(__file__).with_name("ext") / "hotpath.c"
MODULE = "_ttrecord_hotpath"
FORCE_PURE = "TTRECORD_PURE_PYTHON"
C, PYTHON = "c", "python"

_chosen: tuple[ModuleType | None, str, str] | None = None


class Unavailable(Exception):
    """The extension cannot be built or loaded here (the message says why, in one line)."""


def _cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    h = hashlib.sha256()
    for part in sorted(SOURCE.parent.glob("*.[ch]")):  # hotpath.c includes the others
        h.update(part.name.encode() + b"\0" + part.read_bytes())
    h.update(f"{sys.implementation.cache_tag} {platform.machine()}".encode())
    return Path(base) / "ttrecord" / "hotpath" / h.hexdigest()[:20]


def library_path() -> Path:
    return _cache_dir() / f"{MODULE}.abi3.so"


def compiler() -> str | None:
    given = os.environ.get("CC")
    if given:
        return shutil.which(given)
    return shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")


def build() -> Path:
    """The extension's library, compiled now unless the cache has it. Raises Unavailable."""
    return build_extension(SOURCE, library_path(), "the C hot path",
                           "no C compiler (cc/gcc) to build the recorder's C hot path")  # fmt: skip


def build_extension(source: Path, lib: Path, what: str, no_compiler: str,
                    link: tuple[str, ...] = ()) -> Path:  # fmt: skip
    """`lib` compiled from the C file `source` against this Python's headers (plus the
    libraries `link`), unless it exists. Raises Unavailable (`no_compiler`, or "building
    `what` failed: ...")."""
    if lib.is_file():
        return lib
    cc = compiler()
    if cc is None:
        raise Unavailable(no_compiler)
    include = sysconfig.get_paths().get("include") or ""
    if not Path(include, "Python.h").is_file():
        raise Unavailable(f"no Python.h under {include!r} (the Python development headers)")
    lib.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=lib.parent) as tmp:
        out = Path(tmp) / lib.name
        cmd = [cc, "-O2", "-shared", "-fPIC", "-fvisibility=hidden", f"-I{include}", "-o",
               str(out), str(source), *link]  # fmt: skip
        try:
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise Unavailable(f"{cc} failed to run ({exc})") from None
        if done.returncode != 0:
            first = next((ln for ln in done.stderr.splitlines() if "error" in ln),
                         (done.stderr.strip().splitlines() or ["(no output)"])[0])  # fmt: skip
            raise Unavailable(f"building {what} failed: {first}")
        os.replace(out, lib)  # atomic: a concurrent build of the same key is identical
    return lib


def load_extension(module: str, lib: Path) -> ModuleType:
    """The extension module `module` from the library `lib`. Raises Unavailable."""
    loader = importlib.machinery.ExtensionFileLoader(module, str(lib))
    spec = importlib.util.spec_from_file_location(module, lib, loader=loader)
    if spec is None:
        raise Unavailable(f"{lib} is not loadable")
    try:
        loaded = importlib.util.module_from_spec(spec)
        loader.exec_module(loaded)
    except ImportError as exc:
        raise Unavailable(f"loading {lib.name} failed ({exc})") from None
    return loaded


def load() -> ModuleType:
    """The extension module (built first if needed). Raises Unavailable."""
    return load_extension(MODULE, build())


def _forced() -> str | None:
    value = os.environ.get(FORCE_PURE, "")
    return f"{FORCE_PURE}={value}" if value not in ("", "0") else None


def decide() -> dict[str, str]:
    """The path a recording started now takes, as session options: {"hot_path": C or PYTHON,
    "hot_path_reason": why}. Builds the extension if needed; does not load it."""
    forced = _forced()
    if forced:
        return {"hot_path": PYTHON, "hot_path_reason": forced}
    try:
        build()
    except (Unavailable, OSError) as exc:
        return {"hot_path": PYTHON, "hot_path_reason": str(exc)}
    return {"hot_path": C, "hot_path_reason": "built from ext/hotpath.c"}


def choose(requested: str | None = None) -> tuple[ModuleType | None, str, str]:
    """(module or None, C or PYTHON, why): `requested` PYTHON (or the environment variable)
    forces the pure-Python path; otherwise the extension when it loads. Decided once per
    process unless a path is requested."""
    global _chosen
    if requested is None and _chosen is not None:
        return _chosen
    forced = _forced()
    if requested == PYTHON or forced:
        result: tuple[ModuleType | None, str, str] = (None, PYTHON, forced or "requested")
    else:
        try:
            result = (load(), C, "built from ext/hotpath.c")
        except (Unavailable, OSError) as exc:
            if requested == C:  # the session names the C path: say it did not run
                print(f"ttrecord: the recorder's C hot path did not load ({exc}); recording"
                      " on the pure-Python path", file=sys.stderr)  # fmt: skip
            result = (None, PYTHON, str(exc))
    if requested is None:
        _chosen = result
    return result


if __name__ == "__main__":
    _, name, why = choose()
    print(f"recorder hot path: {name} ({why})")
    sys.exit(0)
