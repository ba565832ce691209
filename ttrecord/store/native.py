"""Which path the supervisor turns the event log into a session with: the C pipeline
(ext/pipeline.c, driven by recorder/pipeline.py) or pure Python (LogReader, Decoder,
SessionWriter.add).

Both write the same rows. The C one unmarshals the log's frames and binds the records
straight into SQLite's prepared statements on a connection of its own, so no event becomes a
Python object. It is compiled with the system C compiler against this Python's headers and the
libsqlite3 Python's own `_sqlite3` module is linked with (its prototypes are declared in the
source: no sqlite3.h needed), and cached like the recorder's hot path (recorder/hot_path.py)
under `$XDG_CACHE_HOME/ttrecord/pipeline/<key>/`. A Python whose sqlite3 module has SQLite
built in (no shared library to link) runs the Python path: two copies of SQLite in one process
would not see each other's file locks. `TTRECORD_PURE_PYTHON=1` or `TTRECORD_PYTHON_PIPELINE=1`
forces the Python path. The choice is made once, at start, and stored in the session's
options (`pipeline`, `pipeline_reason`).

Run `python -m ttrecord.store.native` to build it now (prints the choice).
"""

from __future__ import annotations

import hashlib
import os
import platform
import sys
import sysconfig
from pathlib import Path
from types import ModuleType

from ttrecord.recorder.hot_path import (
    FORCE_PURE, Unavailable, build_extension, load_extension,
)

SOURCE = Path(__file__).with_name("ext") / "pipeline.c"
MODULE = "_ttrecord_pipeline"
FORCE_PYTHON = "TTRECORD_PYTHON_PIPELINE"
C, PYTHON = "c", "python"
BUILT = "built from store/ext/pipeline.c"

_chosen: tuple[ModuleType | None, str, str] | None = None


def sqlite_library() -> Path:
    """The shared libsqlite3 this process's sqlite3 module runs on. Raises Unavailable."""
    import _sqlite3  # noqa: F401 - loads the library into this process

    try:
        with open("/proc/self/maps") as maps:
            for line in maps:
                path = line.split(maxsplit=5)[-1].strip()
                if "/libsqlite3" in path and ".so" in path and os.path.isfile(path):
                    return Path(path)
    except OSError:
        pass
    raise Unavailable("Python's sqlite3 module does not use a shared libsqlite3 (SQLite is"
                      " built into it), so a C writer would run a second copy of SQLite")  # fmt: skip


def library_path(sqlite: Path) -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    h = hashlib.sha256(SOURCE.read_bytes())
    h.update(f"{sys.implementation.cache_tag} {platform.machine()} {sqlite}".encode())
    suffix = sysconfig.get_config_var("EXT_SUFFIX") or ".so"
    return Path(base) / "ttrecord" / "pipeline" / h.hexdigest()[:20] / f"{MODULE}{suffix}"


def build() -> Path:
    """The extension's library, compiled now unless the cache has it. Raises Unavailable."""
    sqlite = sqlite_library()
    return build_extension(SOURCE, library_path(sqlite), "the C pipeline",
                           "no C compiler (cc/gcc) to build the supervisor's C pipeline",
                           link=(str(sqlite),))  # fmt: skip


def _forced() -> str | None:
    for name in (FORCE_PURE, FORCE_PYTHON):
        value = os.environ.get(name, "")
        if value not in ("", "0"):
            return f"{name}={value}"
    return None


def choose() -> tuple[ModuleType | None, str, str]:
    """(module or None, C or PYTHON, why), decided once per process: the extension when it
    builds and loads, unless the environment forces the Python path."""
    global _chosen
    if _chosen is not None:
        return _chosen
    forced = _forced()
    if forced:
        _chosen = (None, PYTHON, forced)
        return _chosen
    try:
        _chosen = (load_extension(MODULE, build()), C, BUILT)
    except (Unavailable, OSError) as exc:
        _chosen = (None, PYTHON, str(exc))
    return _chosen


def decide() -> dict[str, str]:
    """The chosen path as session options: {"pipeline": C or PYTHON, "pipeline_reason": why}."""
    _, name, why = choose()
    return {"pipeline": name, "pipeline_reason": why}


if __name__ == "__main__":
    _, name, why = choose()
    print(f"supervisor pipeline: {name} ({why})")
    sys.exit(0)
