"""Record a function in this process, against the emulator or a fake ttnn, and decode the log.

Used by the tests that check the proxy itself (what is wrapped, nesting, ordering) without the
cost of a child interpreter.
"""

from __future__ import annotations

import os
import sys
import types
from collections.abc import Callable
from pathlib import Path

import ttrecord
from ttrecord.events import Event, Status
from ttrecord.recorder.decode import Decoder
from ttrecord.recorder.log import LogReader, LogWriter
from ttrecord.recorder.proxy import install
from ttrecord.recorder.recorder import Recorder


def record_inprocess(backend: types.ModuleType, body: Callable[[types.ModuleType], None],
                     tmp: Path, stack_depth: int = 0,
                     hot_path: str | None = None) -> list[Event]:  # fmt: skip
    """Run `body(ttnn_proxy)` with `backend` recorded (on `hot_path`, by default the process's
    choice); returns the decoded events."""
    saved = {k: v for k, v in sys.modules.items() if k == "ttnn" or k.startswith("ttnn.")}
    if hasattr(backend, "install"):
        backend.install()  # the emulator registers its submodules as ttnn.* too
    else:
        sys.modules["ttnn"] = backend
    log_path = tmp / "events.log"
    log = LogWriter(str(log_path))
    internal = [os.path.dirname(ttrecord.__file__), os.path.dirname(backend.__file__)]
    recorder = Recorder(backend, log, internal, stack_depth, hot_path=hot_path)
    installation = install(backend, recorder)
    try:
        body(sys.modules["ttnn"])
        recorder.finish()
    finally:
        recorder.unwatch()  # also when the body failed: no watcher outlives its recording
        installation.uninstall()
        for k in [k for k in sys.modules if k == "ttnn" or k.startswith("ttnn.")]:
            del sys.modules[k]
        sys.modules.update(saved)
        log.close()
    decoder = Decoder()
    reader = LogReader(str(log_path))
    decoder.feed(reader.read())
    reader.close()
    decoder.close_open_calls(Status.DIED)
    return decoder.ready()
