"""Choosing the ttnn backend: the real library when it can reach a device, else the emulator.

`auto` never opens a device to find out: it checks that `ttnn` is importable and that the
Tenstorrent driver exposes a device node (or a mock cluster is configured), then asks ttnn how
many devices are available (`GetNumAvailableDevices`, which enumerates chips without opening
one). Anything short of that falls back to the emulator, with the reason said once.
"""

from __future__ import annotations

import glob
import importlib
import importlib.metadata
import importlib.util
import os
import sys
from dataclasses import dataclass
from types import ModuleType

from ttrecord import ttnn_versions
from ttrecord.errors import TtrecordError

BACKENDS = ("auto", "ttnn", "emulator")


@dataclass(frozen=True)
class Backend:
    module: ModuleType
    name: str  # "ttnn" | "emulator"
    reason: str
    version: str | None  # the release and its build: "0.81.1 (cp312-…_x86_64, sfpi 7.89.0)"


# A backend that cannot load is ttrecord's own failure, never the program's: `run` exits 125.
LOAD_FAILED = 125


def _emulator(reason: str) -> Backend:
    try:
        from ttrecord import emulator

        module = emulator.install()
    except Exception as exc:  # torch missing (it computes with torch), or broken
        hint = ("; it computes with torch: pip install torch --index-url"
                " https://download.pytorch.org/whl/cpu") if "torch" in str(exc) else ""  # fmt: skip
        raise TtrecordError(f"the emulator ({reason}) cannot load: {exc}{hint}",
                            LOAD_FAILED) from None  # fmt: skip
    version = f"{getattr(module, 'API_VERSION', '?')} API ({module.__version__})"
    return Backend(module, "emulator", reason, version)


def _forget_ttnn() -> None:
    for name in [n for n in sys.modules if n == "ttnn" or n.startswith("ttnn.")]:
        del sys.modules[name]


def _version(module: ModuleType) -> str | None:
    """ttnn's version: ttnn 0.81.1 has no __version__, its distribution metadata does."""
    version = getattr(module, "__version__", None)
    if version is None:
        try:
            version = importlib.metadata.version("ttnn")
        except importlib.metadata.PackageNotFoundError:
            return None
    return str(version)


def _real(reason: str) -> Backend:
    module = importlib.import_module("ttnn")
    version = ttnn_versions.describe(_version(module), ttnn_versions.build_of(module))
    return Backend(module, "ttnn", reason, version)


def choose(requested: str) -> Backend:
    """Load the requested backend; raises TtrecordError when `ttnn` was asked for and fails."""
    if requested == "emulator":
        return _emulator("requested with --backend emulator")
    if requested == "ttnn":
        try:
            reason = "requested with --backend ttnn"
            if os.environ.get("TT_METAL_MOCK_CLUSTER_DESC_PATH"):
                reason = f"mock device (TT_METAL_MOCK_CLUSTER_DESC_PATH set): {reason}"
            return _real(reason)
        except Exception as exc:  # ImportError, or a native library that fails to load
            raise TtrecordError(f"--backend ttnn: cannot import ttnn ({exc})", LOAD_FAILED) from None
    if importlib.util.find_spec("ttnn") is None:
        return _emulator("ttnn is not importable: No module named 'ttnn'")
    if not glob.glob("/dev/tenstorrent*") and not os.environ.get("TT_METAL_MOCK_CLUSTER_DESC_PATH"):
        return _emulator("no Tenstorrent device: /dev/tenstorrent does not exist")
    try:
        backend = _real("")
        count = int(backend.module.GetNumAvailableDevices())
    except Exception as exc:
        _forget_ttnn()
        return _emulator(f"ttnn cannot reach a device: {str(exc).splitlines()[0] if str(exc) else exc!r}")
    if count < 1:
        _forget_ttnn()
        return _emulator("ttnn reports no available device")
    reason = f"{count} device(s) available"
    if os.environ.get("TT_METAL_MOCK_CLUSTER_DESC_PATH"):  # named as such in every report
        reason = f"mock device (TT_METAL_MOCK_CLUSTER_DESC_PATH set): {reason}"
    return Backend(backend.module, "ttnn", reason, backend.version)
