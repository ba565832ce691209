"""One recording setup: the log, the recorder, its audit regions and replay verifier, the
proxy around `ttnn` and `ttrecord.region`, wired the same way for `ttrecord run`'s child and for
the pytest plugin.

Both callers start a `Recording` from the backend they chose and the options the user gave;
what differs is around it (the child runs one program and lets its process end flush the log,
the plugin records many tests in one process and stops at the end of the session).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field

import ttrecord
from ttrecord import audit
from ttrecord.recorder.backend import Backend
from ttrecord.recorder.log import LogWriter
from ttrecord.recorder.proxy import Installation, install
from ttrecord.recorder.recorder import Recorder
from ttrecord.recorder.regions import AuditRegions

TTRECORD_DIR = os.path.dirname(os.path.abspath(ttrecord.__file__))


@dataclass(frozen=True)
class Options:
    """What the user asked for (`ttrecord run` flags, `--ttrecord-*` options)."""

    stack_depth: int = 0
    callsites: bool = True
    graph_capture: bool = True
    audit_regions: Sequence[str] = ()
    verify_replay: bool = False
    hot_path: str | None = None  # hot_path.C or .PYTHON; None: the C one when it loads


def internal_dirs(backend: Backend) -> list[str]:
    """Frames in these folders are not user code (call sites skip them)."""
    return [TTRECORD_DIR, os.path.dirname(os.path.abspath(backend.module.__file__ or ""))]


@dataclass
class Recording:
    """A recorder installed around `backend`'s ttnn, writing to `log`."""

    backend: Backend
    log: LogWriter
    recorder: Recorder
    installation: Installation
    audits: dict[tuple[str, ...], AuditRegions] = field(default_factory=dict)

    def audit(self, regions: Sequence[str]) -> None:
        """Audit the calls of the functions named `regions` from now on (none: stop); the
        wrappers of each set are made once and kept."""
        key = tuple(regions)
        if key and key not in self.audits:
            self.audits[key] = AuditRegions(list(key), self.recorder)
        self.recorder.regions = self.audits.get(key) if key else None

    def end_audit(self) -> None:
        """Close the regions still open (at the end of a program or a test)."""
        if self.recorder.regions is not None:
            self.recorder.regions.finish()
            self.recorder.regions = None

    def verify(self, on: bool) -> None:
        """Verify replays from now on (TR011), or stop and drop what the verifier holds."""
        if on and self.recorder.verifier is None:
            from ttrecord.recorder.verify import Verifier

            self.recorder.verifier = Verifier(self.recorder)
        elif not on and self.recorder.verifier is not None:
            self.recorder.verifier.drop_all()
            self.recorder.verifier = None

    def finish(self) -> None:
        """Record what is left (regions still open, buffers freed since the last call) and
        flush; the proxy stays installed (the child's process is ending)."""
        if self.recorder.regions is not None:
            self.recorder.regions.finish()
        self.recorder.finish()

    def stop(self) -> None:
        """Put ttnn back as it was and close the log (the plugin, at the end of a session)."""
        if audit._recorder is self.recorder:
            audit._recorder = None
        self.installation.uninstall()
        self.recorder.unwatch()
        self.log.close()


def start(backend: Backend, log: LogWriter, options: Options,
          internal: list[str] | None = None) -> Recording:  # fmt: skip
    """Install the recorder around `backend.module` (the `ttnn` the program imports)."""
    dirs = internal if internal is not None else internal_dirs(backend)
    recorder = Recorder(backend.module, log, dirs, options.stack_depth,
                        callsites=options.callsites, hot_path=options.hot_path)  # fmt: skip
    recorder.temporaries.enabled &= options.graph_capture
    audits = {}
    if options.audit_regions:
        key = tuple(options.audit_regions)
        recorder.regions = audits[key] = AuditRegions(list(key), recorder)
    if options.verify_replay:
        from ttrecord.recorder.verify import Verifier

        recorder.verifier = Verifier(recorder)
    recording = Recording(backend, log, recorder, install(backend.module, recorder), audits)
    audit._recorder = recorder  # `with ttrecord.region(...)` in the program
    return recording
