"""The native logs of a session whose `ttrecord run` was killed, for `ttrecord recover`.

`recover` rebuilds the session from its logs; a `--native` run left one binary log per
recording process next to it (`SESSION.db.native.<pid>`), read here by the same decoder the
supervisor uses. Whether the run was an audit is in each log's header; whether the program was
a Python one is known from the Python recorder's log (it wrote a header).
"""

from __future__ import annotations

import glob
from pathlib import Path

from ttrecord.native.decode import NativeDecoder
from ttrecord.native.logformat import NativeLogReader


def native_records(session: Path, python_program: bool) -> tuple[list[tuple], list[str]]:
    """(event-log records of every native log of `session`, the logs' paths)."""
    prefix = str(session) + ".native"
    paths = sorted(glob.glob(glob.escape(prefix) + ".*"))
    if not paths:
        return [], []
    audit = False
    for path in paths:
        reader = NativeLogReader(path)
        next(iter(reader.read()), None)  # reads the header
        audit = audit or reader.audit
    decoder = NativeDecoder(prefix, python_program=python_program, audit=audit)
    return decoder.poll(), paths
