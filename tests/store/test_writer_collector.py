"""Rule: the writer pauses the garbage collector only while it turns a batch into rows, and
leaves it as it found it, whether the batch was written or failed half way."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest

from ttrecord.events import Event, Kind
from ttrecord.store.writer import SessionWriter


def test_the_collector_is_back_as_it_was_after_a_batch(tmp_path: Path) -> None:
    writer = SessionWriter(tmp_path / "gc.db")
    writer.start(script="x.py", argv=["x.py"], backend="emulator")
    try:
        assert gc.isenabled()
        assert writer.add([Event(1, Kind.OP, "add")]) == 1
        assert gc.isenabled()
        with pytest.raises(AttributeError):  # a batch that fails half way
            writer.add([Event(2, Kind.OP, "add"), None])  # type: ignore[list-item]
        assert gc.isenabled()
        gc.disable()
        try:
            writer.add([Event(3, Kind.OP, "relu")])
            assert not gc.isenabled()  # the caller's own choice is kept
        finally:
            gc.enable()
    finally:
        writer.close()
