"""Choosing the recorder's hot path: forced to Python by the environment, the C extension's
pieces equal to the Python ones, and a clear reason when the extension cannot be built."""

from __future__ import annotations

import enum
import functools
import marshal
import random
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


def test_c_append_writes_frames_that_read_back_as_the_python_writer_s(ext, tmp_path):
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
    read = []
    for path in paths:
        assert path.read_bytes()[8:16] == MAGIC
        reader = LogReader(str(path))
        read.append(list(reader.read()))
        assert not reader.unreadable and not reader.truncated_bytes
    assert read[0] == read[1] == [records[0], *records, records[1]]


def _value(rng: random.Random, depth: int = 0) -> object:
    """A value of the kinds log records hold, edge cases first among them."""
    scalars = [None, True, False, 0, -1, 2**31 - 1, -(2**31), 2**31, -(2**31) - 1, 2**62,
               -(2**63), 2**63 - 1, 0.0, -0.0, 1.5, float("inf"), "", "a" * 255, "b" * 256,
               "día", "∑" * 300, b"", b"\x00\xff", rng.randrange(-(2**63), 2**63),
               rng.random(), "".join(chr(rng.randrange(32, 0x2FF)) for _ in range(rng.randrange(9)))]  # fmt: skip
    pick = rng.randrange(10) if depth < 4 else 0
    if pick < 6:
        return rng.choice(scalars)
    items = [_value(rng, depth + 1) for _ in range(rng.choice([0, 1, 3, 300 if depth == 0 else 2]))]
    if pick == 6:
        return items
    if pick == 7:
        return {str(i): v for i, v in enumerate(items)}
    return tuple(items)


def test_c_append_encodes_every_value_kind_as_marshal_reads_it_back(ext):
    """GIVEN 2,000 random nested records of every kind a record holds (ints around the 32- and
    64-bit edges, floats, ASCII and non-ASCII text of 255 and 256 bytes, bytes, tuples of over
    255 items, lists, dicts) and values only marshal.dumps writes (an int past 64 bits, a lone
    surrogate) WHEN the C append frames them THEN marshal.loads reads each back equal, and a
    value marshal refuses raises its ValueError."""
    rng = random.Random(34)
    cases = [("x", _value(rng)) for _ in range(2000)]
    cases += [(2**70, -(2**64)), ("\ud800",), (float("nan"),)]
    m = memoryview(bytearray(HEADER_SIZE + RESERVE + (1 << 20)))
    for record in cases:
        end = ext.append(m, HEADER_SIZE, RESERVE, [record], marshal.dumps)
        assert end > HEADER_SIZE
        size = int.from_bytes(m[HEADER_SIZE : HEADER_SIZE + 4], "little")
        back = marshal.loads(bytes(m[HEADER_SIZE + 4 : HEADER_SIZE + 4 + size]))
        assert back == record or repr(back) == repr(record)  # nan != nan
    # written here, not by marshal.dumps (which marks references): a small tuple of a short
    # ASCII text and a 64-bit int in 15-bit digits
    ext.append(m, HEADER_SIZE, RESERVE, [("ok", 2**40)], marshal.dumps)
    digits = (3).to_bytes(4, "little") + bytes([0, 0, 0, 0, 0, 4])
    assert bytes(m[HEADER_SIZE + 4 : HEADER_SIZE + 16]) == b")\x02z\x02okl" + digits[:5]
    with pytest.raises(ValueError):
        ext.append(m, HEADER_SIZE, RESERVE, [(True, enum.IntEnum("E", "A").A)], marshal.dumps)


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


class _Buf:
    """A stand-in for a device tensor's metadata: only what the describer's cache checks."""


class _T:
    """A tensor type for the argument scan: `tensor_id`, `buffer_address()`, one that raises
    (deallocated) or changes address (reallocated), and one without `tensor_id`."""

    def __init__(self, tid, address, gone=False, no_id=False):
        if not no_id:
            self.tensor_id = tid
        self.address, self.gone = address, gone

    def buffer_address(self):
        if self.gone:
            raise RuntimeError("deallocated")
        return self.address


class _Dev:
    pass


_TorchTensor = type("Tensor", (), {"__module__": "torch", "shape": (3,), "dtype": "torch.int8"})


def _describer_and_scan(hot):
    """A TensorDescriber and Recorder._scan wired to the stand-ins, on path `hot`."""
    import types

    from ttrecord.recorder.recorder import Recorder, _KEYS
    from ttrecord.recorder.tensors import TensorDescriber

    built: list[int | None] = []

    def build(t, tid):  # what TensorDescriber._build does, without ttnn metadata
        built.append(tid)
        buf = None if t.address is None else (0, "DRAM", t.address, 64, None, None)
        return (tid, "device" if buf else "host", (32, 32), "BFLOAT16", "TILE", None, buf)

    describer = TensorDescriber(lambda d: 7, lambda *a: None, lambda *a: 1)
    describer._build = build  # type: ignore[method-assign]
    describer.describer = (describer.cache, describer._by_buffer, build)
    if hot is not None:
        describer.describe = functools.partial(hot.describe, describer.describer)  # type: ignore[method-assign]
    devices = types.SimpleNamespace(types={_Dev}, id_of=lambda d: 7)
    rec = types.SimpleNamespace(tensor_type=_T, tensors=describer, devices=devices)
    if hot is None:
        return describer, built, lambda *a: Recorder._scan(rec, *a)  # type: ignore[arg-type]
    from ttrecord.recorder.tensors import describe_torch

    return describer, built, functools.partial(hot.scan, _T, devices.types, _KEYS, {},
                                               describer.describer, describe_torch,
                                               devices.id_of)  # fmt: skip


def test_c_scan_and_describe_equal_the_python_ones(ext):
    """GIVEN the same calls WHEN scanned by Recorder._scan and by the C scan THEN the inputs,
    scalars, device, cq, device-argument flag and held tensors are equal, and the same tensors
    are described afresh (cache misses) in the same order, and cached alike."""
    import torch

    results = []
    for hot in (None, ext):
        describer, built, scan = _describer_and_scan(hot)
        a, b, host = _T(1, 100), _T(2, 200), _T(3, None)
        moved, gone, anon = _T(4, 300), _T(5, 400), _T(None, 500, no_id=True)
        calls = [
            (a, (b, 1, 2.5, True, "s"), {"cq_id": 1, "memory_config": None}),
            (None, ([a, b, 3], (1, 2), [], [1, "x", None]), {"device": _Dev()}),
            (None, (host, host, anon, torch.ones(2, 2), _TorchTensor()), {}),
            (None, (moved, gone), {"queue_id": 0}),
            (None, (_Dev(), tuple(range(17)), [1.0] * 16), {"cq_id": "0"}),
            (None, tuple(range(70)) + (a,), {}),  # past the 64 named positions
            (host, (), {}),
        ]
        out = [scan(*c) for c in calls]
        moved.address, gone.gone = 301, True
        out += [scan(None, (moved, gone, a), {}), scan(None, (), {"t": [b, b]})]
        # held: (tensor, buffer) pairs; the tensors are this run's objects, compared by id
        out = [(*o[:5], [(getattr(t, "tensor_id", "anon"), buf) for t, buf in o[5]]) for o in out]
        results.append((out, built, dict(describer.cache), dict(describer._by_buffer)))
    assert results[0] == results[1]
    out, built, cache, by_buffer = results[0]
    assert cache[4] == (301, out[-2][0][0]) and by_buffer[(0, "DRAM", 301)] == [4]
    assert out[0][2] == 0 and out[0][3] == 1 and out[1][2] == 7 and out[1][4] is True
    assert built.count(4) == 2 and built.count(5) == 2 and built.count(None) == 1


def test_c_scan_passes_describe_errors_on(ext):
    """A describer failure reaches the recorder (which reports it) on both paths; a call's
    arguments that are not a tuple are refused."""
    for hot in (None, ext):
        describer, _, scan = _describer_and_scan(hot)

        def build(t, tid):
            raise LookupError("no metadata")

        describer._build = build  # type: ignore[method-assign]
        if hot is not None:
            broken = (describer.cache, describer._by_buffer, build)
            scan = functools.partial(scan.func, *scan.args[:4], broken, *scan.args[5:])
        with pytest.raises(LookupError, match="no metadata"):
            scan(None, (_T(9, 900),), {})
    with pytest.raises(TypeError):
        scan(None, [1], {})


def test_c_build_describes_emulator_tensors_as_python_does(ext):
    """GIVEN emulator tensors (host, interleaved DRAM and L1, row-major, height-sharded, one
    deallocated) WHEN described by the C build and by TensorDescriber._build THEN the
    descriptions are equal (sizes from the allocator's pages when the ledger has none)."""
    import torch

    from ttrecord import emulator
    from ttrecord.recorder.tensors import TensorDescriber

    ttnn = emulator.install()
    dev = ttnn.open_device(device_id=0)
    try:
        ones = torch.ones(128, 64)
        host = ttnn.from_torch(ones, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
        dram = ttnn.from_torch(ones, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=dev)
        l1 = ttnn.from_torch(ones, dtype=ttnn.float32, layout=ttnn.ROW_MAJOR_LAYOUT, device=dev,
                             memory_config=ttnn.L1_MEMORY_CONFIG)  # fmt: skip
        grid = ttnn.CoreRangeSet({ttnn.CoreRange(ttnn.CoreCoord(0, 0), ttnn.CoreCoord(3, 0))})
        cfg = ttnn.MemoryConfig(ttnn.TensorMemoryLayout.HEIGHT_SHARDED, ttnn.BufferType.L1,
                                ttnn.ShardSpec(grid, [32, 64], ttnn.ShardOrientation.ROW_MAJOR))
        sharded = ttnn.to_memory_config(dram, cfg)
        freed = ttnn.from_torch(ones, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=dev)
        ttnn.deallocate(freed)
        tensors = [host, dram, l1, sharded, freed, dram]
        # the ledger knows one buffer's size; the C build reads the dictionaries behind the
        # callbacks (a device id it does not find there, it asks for)
        entries = {(0, "DRAM", int(dram.buffer_address())): [None, 12345]}
        out = []
        for hot in (None, ext):
            d = TensorDescriber(lambda device: 0 if device is not None else None,
                                lambda *place: (entries.get(place) or [None, None])[1],
                                lambda device, btype: 8 if btype != "L1" else 130)  # fmt: skip
            d.use_hot_path(hot, {}, entries, {})
            out.append([d._build(t, i) for i, t in enumerate(tensors)])
        assert out[0] == out[1]
        assert out[0][0][1] == "host" and out[0][1][6][3] == 12345
        assert out[0][2][6][3] == -(-out[0][2][6][5] // 130) * out[0][2][6][4]
        assert "height_sharded" in out[0][3][5] and out[0][4][6] is None
    finally:
        ttnn.close_device(dev)


@pytest.mark.parametrize("path", [hot_path.C, hot_path.PYTHON])
def test_eager_ops_and_replay_loop_calls_are_recorded_whole_in_c(ext, tmp_path, path):
    """GIVEN a recorder on each hot path WHEN the program runs eager ops, a host copy, a read
    and replays, then ops inside a capture THEN on the C path the first four never reach the
    Python `_begin`, the captured ops do (the C `call` hands them over); on the Python path
    every call does."""
    import torch

    from tests.recorder.inprocess import record_inprocess
    from ttrecord import emulator
    from ttrecord.recorder.recorder import Recorder

    begun: list[str] = []
    original = Recorder._begin

    def counting(self, tl, name, kind, *rest):
        begun.append(name)
        return original(self, tl, name, kind, *rest)

    def body(ttnn):
        dev = ttnn.open_device(device_id=0)
        x = ttnn.from_torch(torch.ones(32, 32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT,
                            device=dev)  # fmt: skip
        host = ttnn.from_torch(torch.ones(32, 32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
        ttnn.relu(x)
        ttnn.exp(x)  # compiled before the capture
        tid = ttnn.begin_trace_capture(dev, cq_id=0)
        y = ttnn.exp(x)
        ttnn.end_trace_capture(dev, tid, cq_id=0)
        ttnn.copy_host_to_device_tensor(host, x)
        ttnn.execute_trace(dev, tid, cq_id=0, blocking=False)
        ttnn.to_torch(y)
        ttnn.release_trace(dev, tid)
        ttnn.close_device(dev)

    mp = pytest.MonkeyPatch()
    mp.setattr(Recorder, "_begin", counting)
    try:
        events = record_inprocess(emulator, body, tmp_path, hot_path=path)
    finally:
        mp.undo()
    names = [e.name for e in events if e.parent is None and e.kind.value not in ("alloc", "free")]
    fast = {"from_torch", "relu", "copy_host_to_device_tensor", "execute_trace", "to_torch"}
    assert fast <= set(names) and "exp" in names
    if path == hot_path.C:
        assert not fast & set(begun) and begun.count("exp") == 1 and "begin_trace_capture" in begun
    else:
        assert set(begun) == set(names)


@pytest.mark.parametrize("path", [hot_path.C, hot_path.PYTHON])
def test_a_keyboard_interrupt_inside_the_recorder_reaches_the_program(ext, tmp_path, path):
    """GIVEN a device whose program-cache count (read by the recorder after each op) raises
    KeyboardInterrupt once WHEN the program runs an op THEN the program gets the
    KeyboardInterrupt on either hot path (the recorder swallows its own Exceptions only), and
    the next op records as usual."""
    import torch

    from tests.recorder.inprocess import record_inprocess
    from ttrecord import emulator

    interrupts = [KeyboardInterrupt()]
    count = emulator.MeshDevice.num_program_cache_entries
    seen = []

    def interrupted(self):
        if interrupts:
            raise interrupts.pop()
        return count(self)

    def body(ttnn):
        dev = ttnn.open_device(device_id=0)
        x = ttnn.from_torch(torch.ones(32, 32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT,
                            device=dev)  # fmt: skip
        mp.setattr(emulator.MeshDevice, "num_program_cache_entries", interrupted)
        try:
            ttnn.relu(x)
        except KeyboardInterrupt:
            seen.append("interrupted")
        ttnn.relu(x)
        ttnn.close_device(dev)

    mp = pytest.MonkeyPatch()
    try:
        events = record_inprocess(emulator, body, tmp_path, hot_path=path)
    finally:
        mp.undo()
    assert seen == ["interrupted"]
    relus = [e for e in events if e.name == "relu"]
    assert len(relus) == 2 and relus[1].status.value == "ok"


def test_c_queue_facts_equal_the_python_ones(ext):
    """GIVEN the calls of every queue signature (and an unknown name, an op's "") with their
    queue and blocking flag given by keyword, by position, as None, as a bool or as text
    WHEN the C call works out their queue facts THEN they equal queues.queue_facts, and the
    event calls are left to it."""
    from ttrecord.recorder.queues import SIGNATURES, EventNumbers, queue_facts

    shapes = [((), {}), (("d", 1), {}), (("d", 1, 0), {}), (("d", 1, False, 2), {}),
              (("d",), {"cq_id": 1}), (("d",), {"cq_id": None, "queue_id": 2}),
              (("d",), {"queue_id": 1, "blocking": False}), (("d", "t"), {"blocking": 0}),
              ((False, True), {}), (("h", "d", "1"), {}), (("h", "d", "x"), {"cq_id": True}),
              (("d", 2), {"blocking": None, "cq_id": 1.0})]  # fmt: skip
    names = [*SIGNATURES, "ttnn.execute_trace", "Tensor.cpu", "relu", "", "ttnn.record_event"]
    asked = set()
    for name in names:
        for args, kwargs in shapes:
            got = ext.queue_facts(SIGNATURES, name, args, kwargs)
            if got == "ask":
                asked.add(name.rsplit(".", 1)[-1])
                continue
            assert got == queue_facts(name, args, kwargs, None, EventNumbers()), (name, args, kwargs)
    assert asked == {"record_event", "wait_for_event", "event_synchronize"}
