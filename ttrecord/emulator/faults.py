"""Fault injection for crash and hang handling tests.

Set `TTRECORD_EMULATOR_FAULT` to make the Nth `execute_trace` of the process
(counting from 1, across all devices) misbehave inside the call:

    TTRECORD_EMULATOR_FAULT=segv@replay:2        # die by a real SIGSEGV
    TTRECORD_EMULATOR_FAULT=hang@replay:2        # sleep for an hour
    TTRECORD_EMULATOR_FAULT=hang@replay:2:30     # sleep for 30 s

The variable is read at every execute_trace, so a script may set it itself
before it starts replaying.
"""

from __future__ import annotations

import itertools
import os
import signal
import threading
import time
from typing import NamedTuple, Optional

ENV_VAR = "TTRECORD_EMULATOR_FAULT"
DEFAULT_HANG_SECONDS = 3600.0

_replays = itertools.count(1)
_lock = threading.Lock()


class Fault(NamedTuple):
    kind: str  # "segv" or "hang"
    at_replay: int
    seconds: float


def parse(spec: Optional[str]) -> Optional[Fault]:
    """Parse `kind@replay:N[:seconds]`; None when unset, ValueError when malformed."""
    if not spec:
        return None
    try:
        kind, where = spec.strip().split("@", 1)
        parts = where.split(":")
        if parts[0] != "replay" or kind not in ("segv", "hang"):
            raise ValueError
        seconds = float(parts[2]) if len(parts) > 2 else DEFAULT_HANG_SECONDS
        return Fault(kind, int(parts[1]), seconds)
    except (ValueError, IndexError):
        raise ValueError(
            f"{ENV_VAR}={spec!r}: expected segv@replay:N, hang@replay:N or hang@replay:N:SECONDS"
        ) from None


def on_replay() -> None:
    """Count one execute_trace and inject the configured fault when its turn comes."""
    with _lock:
        count = next(_replays)
    fault = parse(os.environ.get(ENV_VAR))
    if fault is None or fault.at_replay != count:
        return
    if fault.kind == "segv":
        crash()
    else:
        time.sleep(fault.seconds)


def crash() -> None:
    """Die by a real SIGSEGV, as a fault in native code would.

    A Python-level SIGSEGV handler would swallow the signal, so it is reset to
    the default first; a C-level handler such as faulthandler's is kept (it
    dumps the Python stacks and re-raises, as it would for a native crash).
    """
    if callable(signal.getsignal(signal.SIGSEGV)):
        signal.signal(signal.SIGSEGV, signal.SIG_DFL)
    signal.pthread_kill(threading.get_ident(), signal.SIGSEGV)
    os.kill(os.getpid(), signal.SIGSEGV)
    time.sleep(1)
    os._exit(-signal.SIGSEGV)
