"""The supervisor's C pipeline: the event log read, decoded and written into the session in
one pass (store/ext/pipeline.c; store/native.py builds and chooses it).

`NativePipeline` stands where the supervisor otherwise holds a `Decoder` and hands its events
to `SessionWriter.add`: the same records become the same rows (tests/recorder/
test_pipelines_agree.py), but no record becomes an Event and no row a tuple. The C side owns
what the Python path keeps in the decoder and the writer between batches (the running calls,
the events waiting for release, the buffer pairing, call-site and trace ids); the records that
are no event (the header, call sites, the program's end) come back here and go through
`Decoder._other`, so `end` is the Python decoder's. Its connection to the session is its own
and is idle between batches: the `SessionWriter` beside it writes the session row, and
finishes the file after `close()`.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterable
from pathlib import Path
from types import ModuleType
from typing import Any

import sqlite_utils.db

from ttrecord.events import CallSite, Status
from ttrecord.recorder.decode import Decoder, ProgramEnd
from ttrecord.recorder.log import LogReader
from ttrecord.recorder.records import RECORDS, RecordType
from ttrecord.store import vocabulary
from ttrecord.store.storable import storable
from ttrecord.store.writer import _encode

_EVENTS = (RecordType.BEGIN, RecordType.END, RecordType.POINT)

# pipeline.c reads the records by position, in the orders decode.py checks at import.


def _device_row(device: Any, seq: int, args: dict | None) -> tuple:
    """The devices row SessionWriter._open_device inserts (through sqlite-utils, which turns
    containers into JSON)."""
    args = args or {}
    info = args.get("info")
    row = (device, args.get("arch"), args.get("num_dram_banks"), args.get("num_l1_banks"),
           args.get("trace_region_size"), seq, None if info is None else _encode(info))  # fmt: skip
    return tuple(sqlite_utils.db.jsonify_if_needed(v) for v in row)


class NativePipeline:
    """A Decoder and a SessionWriter's `add` in one, over the C extension `module`."""

    def __init__(self, module: ModuleType, path: str | os.PathLike[str]) -> None:
        self._decoder = Decoder()
        self.end: ProgramEnd = self._decoder.end
        self._slots: dict[CallSite, int] = {}  # equal sites share a callsites row
        helpers = (  # the vocabulary's text, each its own stored form (compared by identity)
            {text: text for text in vocabulary.KINDS},
            {text: text for text in vocabulary.PHASES},
            {text: text for text in vocabulary.STATUSES},
            storable,
            _encode,
            self._other,
            _device_row,
            sqlite3,
        )
        self._c = module.Pipeline(os.fspath(Path(path)), helpers)

    @property
    def open_calls(self) -> dict[int, tuple]:
        """seq -> Begin record of each call still running."""
        return self._c.open_calls  # type: ignore[no-any-return]

    @property
    def released(self) -> int:
        return self._c.released  # type: ignore[no-any-return]

    def read(self, reader: LogReader, max_bytes: int = 16 << 20) -> None:
        """Decode what the log gained since the last read (at most `max_bytes` of it)."""
        reader.read_into(self._c.frames, max_bytes)

    def feed(self, records: Iterable[tuple]) -> None:
        """Decode records read elsewhere (another recorder's log), as Decoder.feed."""
        self._c.feed(records)

    def write_ready(self) -> int:
        """Write the events ready for release in one transaction; returns how many. Raises the
        sqlite3 error of a write that failed (it is rolled back; those events are gone)."""
        return self._c.release(True)  # type: ignore[no-any-return]

    def drop_ready(self) -> int:
        """Release the ready events without storing them (the session cannot be written)."""
        return self._c.release(False)  # type: ignore[no-any-return]

    def close_open_calls(self, status: Status, error: str | None = None) -> int | None:
        """Decoder.close_open_calls: every running call becomes an event with `status`."""
        return self._c.close_open(status.value, error)  # type: ignore[no-any-return]

    def close(self) -> None:
        """Close the connection (the SessionWriter then finishes the file)."""
        self._c.close()

    def _other(self, raw: Any) -> tuple | None:
        """A record that is no event, decoded as Decoder.feed does; a call site is returned
        to the C side as (site_id, slot, file, line, function, stack as JSON)."""
        tag = raw[0]
        if tag in _EVENTS:  # an event record that is not a tuple of at least two fields
            raise TypeError(f"a {tag!r} record must be a tuple, not {type(raw).__name__}")
        rec = RECORDS[tag]._make(raw)
        self._decoder._other(rec)
        if tag != RecordType.SITE:
            return None
        site = self._decoder.sites[rec.site_id]
        slot = self._slots.setdefault(site, len(self._slots))
        return (rec.site_id, slot, site.file, site.line, site.function,
                _encode([list(f) for f in site.stack]))  # fmt: skip


def open_pipeline(path: str | os.PathLike[str]) -> NativePipeline | None:
    """The C pipeline writing into the session at `path`, or None when the Python path was
    chosen (store/native.py)."""
    from ttrecord.store import native

    module, _, _ = native.choose()
    if module is None:
        return None
    return NativePipeline(module, path)
