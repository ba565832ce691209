"""Choosing the recorder's hot path: forced to Python by the environment, the C extension's
pieces equal to the Python ones, and a clear reason when the extension cannot be built."""

from __future__ import annotations

import marshal
import sys

import pytest

from ttrecord.recorder import hot_path
from ttrecord.recorder.callsite import CallSites
from ttrecord.recorder.log import HEADER_SIZE, MAGIC, RESERVE, LogReader, LogWriter


@pytest.fixture(scope="module")
def ext():
    module, name, why = hot_path.choose(hot_path.C)
    if module is None:
        pytest.skip(f"the C hot path is not available here: {why}")
    return module


def test_environment_forces_the_python_path(monkeypatch):
    monkeypatch.setenv(hot_path.FORCE_PURE, "1")
    assert hot_path.decide() == {"hot_path": "python", "hot_path_reason": "TTRECORD_PURE_PYTHON=1"}
    assert hot_path.choose(hot_path.C)[:2] == (None, "python")


def test_without_a_compiler_the_reason_is_one_line(monkeypatch, tmp_path):
    monkeypatch.delenv(hot_path.FORCE_PURE, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))  # nothing built there
    monkeypatch.setenv("CC", "no-such-compiler-here")
    chosen = hot_path.decide()
    assert chosen["hot_path"] == "python"
    assert chosen["hot_path_reason"] == "no C compiler (cc/gcc) to build the recorder's C hot path"


def test_c_append_writes_the_frames_the_python_writer_writes(ext, tmp_path):
    records = [("P", 1, None, 5, 7, "note", "x", "eager", 0, None, None, {"a": 1}, None, None),
               ("E", 2, 9, "ok", None, (), None, None, None)]  # fmt: skip
    paths = []
    for hot in (None, ext):
        path = tmp_path / f"log-{hot is not None}"
        log = LogWriter(str(path))
        log.use_hot_path(hot)
        log.write(records[0])  # maps the file (always the Python path)
        log.write_many(records)  # a list frame
        log.write(records[1])  # a single-record frame
        log.close()
        paths.append(path)
    a, b = (p.read_bytes() for p in paths)
    assert a == b and a[8:16] == MAGIC
    reader = LogReader(str(paths[1]))
    assert list(reader.read()) == [records[0], *records, records[1]]


def test_c_append_leaves_a_full_mapping_to_the_caller(ext):
    m = memoryview(bytearray(HEADER_SIZE + 64 + RESERVE))
    assert ext.append(m, HEADER_SIZE, RESERVE, [("x" * 100,)], marshal.dumps) == 0
    assert bytes(m[:8]) == bytes(8)  # nothing committed
    end = ext.append(m, HEADER_SIZE, RESERVE, [("ok",)], marshal.dumps)
    assert end == HEADER_SIZE + 4 + len(marshal.dumps(("ok",)))
    assert int.from_bytes(bytes(m[:8]), "little") == end
    with pytest.raises(ValueError):  # marshal refuses: nothing written, the caller drops it
        ext.append(m, end, RESERVE, [(object(),)], marshal.dumps)
    assert int.from_bytes(bytes(m[:8]), "little") == end


class _Log:
    def __init__(self) -> None:
        self.sites: list[tuple] = []

    def defer(self, record: tuple) -> None:
        self.sites.append(record)


def _outer(sites: CallSites) -> list:
    return [_inner(sites) for _ in range(2)] + [_inner(sites)]


def _inner(sites: CallSites) -> object:
    return sites.here(sys._getframe(0))


def test_c_call_sites_number_sites_as_the_python_walk_does(ext):
    results = []
    for hot in (None, ext):
        log = _Log()
        sites = CallSites([], 2, log, hot)  # type: ignore[arg-type]
        results.append((_outer(sites), log.sites))
    assert results[0] == results[1]
    ids, defined = results[0]
    assert ids[0] == ids[1] != ids[2]  # one line in a loop is one site; another line another
    assert [r[1] for r in defined] == sorted(set(ids))


def test_c_call_sites_skip_internal_frames(ext):
    log = _Log()
    here = __file__.rsplit("/", 1)[0]
    sites = CallSites([here], 0, log, ext)  # type: ignore[arg-type]
    assert sites.here(sys._getframe(0)) is not None  # pytest's own frames are outside
    assert all(r[2] != __file__ for r in log.sites)
