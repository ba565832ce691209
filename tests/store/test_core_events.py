"""`Session.core_events` (one pass over the events table, what `check` loads) reads the same
events, with the same tensors, buffers and arguments, as asking `events_at` for the seqs
`core_event_seqs` selects (the general path), and the findings of a generated decode session
are the same through either."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from ttrecord.analysis import analyze
from ttrecord.analysis.loading import wanted
from ttrecord.store.queries import CORE_PARTS
from ttrecord.store.reader import Session
from ttrecord.testing import SessionBuilder


def _decode_session(path: Path) -> SessionBuilder:
    """Eager steps, an audited region, a prep run and capture (an intermediate freed inside),
    replays with the input copied in and the output read, an allocation over trace memory
    live across a replay, a compile note, a release."""
    b = SessionBuilder(file="/models/decoder.py")
    b.open_device(line=5)
    x = b.alloc(0x100000)
    w = b.alloc(0x100800, size=0x4000)
    b.begin_region("decode_step", line=8)
    tmp = b.alloc(0x110000)
    b.op("ttnn.matmul", [x, w], [tmp], line=9)
    b.free(tmp)
    b.end_region(line=10)
    for cycle in range(3):
        for step in range(4):
            b.h2d(x, line=12)
            mid = b.alloc(0x110000)
            b.op("ttnn.matmul", [x, w], [mid], line=13, args={"step": step})
            out = b.alloc(0x110800)
            b.op("ttnn.softmax", [mid], [out], line=14, args={"dim": -1})
            b.free(mid)
            b.d2h(out, line=15)
            b.free(out)
        trace = b.begin_trace(line=20)
        mid = b.alloc(0x110000)
        b.op("ttnn.matmul", [x, w], [mid], line=21)
        out = b.alloc(0x110800)
        b.op("ttnn.softmax", [mid], [out], line=22, args={"dim": -1})
        b.free(mid)
        b.end_trace(trace, line=23)
        if cycle == 1:
            scratch = b.alloc(0x110000)  # over the freed intermediate: TR004
            b.note("program_cache_miss", line=24)
        for _ in range(5):
            b.h2d(x, line=25)
            b.execute(trace, line=26)
            b.d2h(out, line=27)
        if cycle == 1:
            b.free(scratch)
        b.release(trace, line=28)
        b.free(out)
    b.write(path, script="/models/decoder.py")
    return b


@pytest.fixture(scope="module")
def decode(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, SessionBuilder]:
    path = tmp_path_factory.mktemp("core") / "decode.db"
    return path, _decode_session(path)


@pytest.mark.parametrize("parts", [None, set(), {"trace_buffers", "prep_runs"}, "rules"])
def test_core_events_are_the_events_at_the_core_seqs(decode: tuple[Path, SessionBuilder],
                                                      parts: set[str] | str | None) -> None:  # fmt: skip
    path, _ = decode
    names = wanted() & CORE_PARTS.keys() if parts == "rules" else parts
    assert not isinstance(names, str)
    with Session.open(path) as s:
        general = s.events_at(s.core_event_seqs(names))
        fast = s.core_events(names)
    assert [e.seq for e in fast] == [e.seq for e in general]
    assert fast == general  # every field: tensors, buffer, arguments, call site
    assert any(e.outputs for e in fast) and any(e.buffer for e in fast)
    assert any(e.region for e in fast) and any(e.args for e in fast)
    # each event owns its arguments: a rule that edits one changes no other event
    args = [e.args for e in fast if e.args]
    assert len({id(a) for a in args}) == len(args)


def test_findings_through_the_fast_path_equal_the_general_path(
        decode: tuple[Path, SessionBuilder], monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    path, _ = decode
    with Session.open(path) as s:
        fast = [dataclasses.asdict(f) for f in analyze(s)]
    monkeypatch.setattr(Session, "core_events",
                        lambda self, parts=None: self.events_at(self.core_event_seqs(parts)))  # fmt: skip
    with Session.open(path) as s:
        general = [dataclasses.asdict(f) for f in analyze(s)]
    assert fast == general
    assert {f["rule"] for f in fast} >= {"TR004"}
