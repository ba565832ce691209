"""`ttrecord run --native`: the supervisor with the native recorder preloaded into the program.

The program is a C++ executable (run as it is) or a Python script (run by the usual recording
child, so the Python recorder and the native one record the same process). Either way the
program's environment gets LD_PRELOAD with the native recorder and TTRECORD_NATIVE_LOG, the
prefix of its per-process logs; the supervisor tails those logs beside the Python recorder's
and feeds both to one decoder, so the session is built exactly as for a Python program.
"""

from __future__ import annotations

import os
from importlib import metadata
from pathlib import Path
from typing import Any

from ttrecord.errors import TtrecordError
from ttrecord.native.build import Built, ensure_built
from ttrecord.native.decode import NativeDecoder
from ttrecord.recorder.supervisor import RunOptions, RunResult, Supervisor


def is_python_program(options: RunOptions) -> bool:
    if options.module is not None or options.script is None:
        return True
    if options.script.endswith((".py", ".pyw")):
        return True
    try:
        with open(options.script, "rb") as fh:
            head = fh.read(128)
    except OSError:
        return False
    return head.startswith(b"#!") and b"python" in head.split(b"\n", 1)[0]


def _ttnn_version() -> str | None:
    try:
        return metadata.version("ttnn")
    except metadata.PackageNotFoundError:
        return None


class NativeSupervisor(Supervisor):
    def __init__(self, options: RunOptions, *, audit: bool = False, built: Built | None = None) -> None:
        super().__init__(options)
        self.audit = audit
        self.python_program = is_python_program(options)
        if not self.python_program:
            script = options.script or ""
            if not os.access(script, os.X_OK):
                raise TtrecordError(f"{script}: not an executable program (with --native, a C++"
                                    " program runs as it is; a Python script ends in .py)")  # fmt: skip
            if options.backend == "emulator":
                raise TtrecordError("--backend emulator applies to Python programs; a C++"
                                    " program calls the real tt-metal")  # fmt: skip
        self.built = built or ensure_built()
        self.prefix = str(options.output) + ".native"
        self.native = NativeDecoder(self.prefix, python_program=self.python_program, audit=audit,
                                    missing=self.built.missing, ttnn_version=_ttnn_version())  # fmt: skip

    def _child_command(self, log_path: Path) -> list[str]:
        if self.python_program:
            return super()._child_command(log_path)
        script = self.options.script or ""
        program = script if os.sep in script else os.path.join(".", script)
        return [program, *self.options.argv]

    def _child_env(self) -> dict[str, str] | None:
        env = dict(os.environ)
        preload = env.get("LD_PRELOAD", "")
        env["LD_PRELOAD"] = f"{self.built.library} {preload}".strip()
        env["TTRECORD_NATIVE_LOG"] = self.prefix
        env["TTRECORD_NATIVE_AUDIT"] = "1" if self.audit else "0"
        env["TTRECORD_NATIVE_SUPERVISOR"] = str(os.getpid())  # see PR_SET_PDEATHSIG in recorder.cpp
        # A Python program's native events are told apart by their stacks (decode.py).
        env["TTRECORD_NATIVE_STACKS"] = "all" if self.python_program else "auto"
        # A C++ program finds tt-metal's runtime files (kernels, firmware) there; Python's
        # ttnn/__init__.py sets it for Python programs.
        env.setdefault("TT_METAL_RUNTIME_ROOT", str(self.built.tt_metal.parents[2]))
        return env

    def _drain(self, reader: Any, decoder: Any, writer: Any) -> None:
        decoder.feed(self.native.poll())
        super()._drain(reader, decoder, writer)

    def run(self) -> RunResult:
        for stale in Path(self.prefix).parent.glob(Path(self.prefix).name + ".*"):
            stale.unlink(missing_ok=True)
        try:
            return super().run()
        finally:
            if not os.environ.get("TTRECORD_KEEP_LOG"):
                for path in self.native.paths():
                    Path(path).unlink(missing_ok=True)

