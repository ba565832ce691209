"""Large synthetic sessions through the real writer, shaped like a traced decode loop.

Each step is what a model's decode step looks like to the recorder: an input copy, a handful
of ops with intermediates allocated and freed, and a readback; every `capture_every` steps the
loop is captured and replayed. Sessions are cached by size under the temp folder because
building a million events takes a while and every benchmark wants the same one.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

from ttrecord.events import BufferRef, CallSite, Event, Kind, Phase, SessionStatus, TensorRef
from ttrecord.store.writer import SessionWriter
from ttrecord.testing import SessionBuilder

_FILE = "/models/decoder.py"
_OPS = ("ttnn.matmul", "ttnn.add", "ttnn.rms_norm", "ttnn.softmax", "ttnn.matmul", "ttnn.silu")


def _ref(buf: BufferRef) -> TensorRef:
    return TensorRef(buf.address, "device", (1, 32, 1024), "BFLOAT16", "TILE", "DRAM", buf)


def decode_events(n_events: int, capture_every: int = 50) -> Iterator[Event]:
    """Yield about `n_events` events of a decode loop with periodic capture and replay."""
    seq = 0
    t = 0
    base = 1048704
    sites: dict[int, CallSite] = {}  # one object per site, as the recorder's decoder keeps

    def make(kind: Kind, name: str, line: int | None, **kw) -> Event:
        nonlocal seq, t
        seq += 1
        t += 2000
        site = None
        if line is not None:
            site = sites.get(line) or sites.setdefault(line, CallSite(_FILE, line, "forward"))
        return Event(seq, kind, name, t_ns=t, dur_ns=1500, device=0, callsite=site, **kw)

    x = BufferRef(0, "DRAM", base, 2048)
    w = BufferRef(0, "DRAM", base + 2048, 262144)
    yield make(Kind.DEVICE_OPEN, "open_device", 5, args={"num_dram_banks": 8, "num_l1_banks": 130})
    yield make(Kind.ALLOC, "alloc", None, buffer=x)
    yield make(Kind.ALLOC, "alloc", None, buffer=w)
    step = 0
    trace_id = 0
    while seq < n_events:
        step += 1
        capture = step % capture_every == 0
        phase = Phase.CAPTURE if capture else Phase.EAGER
        if capture:
            yield make(Kind.TRACE_BEGIN, "begin_trace_capture", 40, trace=trace_id)
        else:
            yield make(Kind.H2D, "copy_host_to_device_tensor", 30, outputs=(_ref(x),))
        prev = x
        temps = []
        for i, name in enumerate(_OPS):
            out = BufferRef(0, "DRAM", base + 264192 + 2048 * i, 2048)
            yield make(Kind.ALLOC, "alloc", None, buffer=out, phase=phase)
            trace = trace_id if capture else None
            ins = (_ref(prev), _ref(w)) if "matmul" in name else (_ref(prev),)
            yield make(Kind.OP, name, 10 + i, phase=phase, trace=trace, inputs=ins,
                       outputs=(_ref(out),), args={"step": step} if name == "ttnn.add" else None)  # fmt: skip
            temps.append(out)
            prev = out
        for buf in temps[:-1]:
            yield make(Kind.FREE, "free", None, buffer=buf, phase=phase)
        if capture:
            yield make(Kind.TRACE_END, "end_trace_capture", 42, trace=trace_id)
            yield make(Kind.TRACE_EXECUTE, "execute_trace", 44, trace=trace_id, phase=Phase.REPLAY)
            yield make(Kind.TRACE_RELEASE, "release_trace", 46, trace=trace_id)
            trace_id += 1
        else:
            yield make(Kind.D2H, "to_torch", 20, inputs=(_ref(prev),))
        yield make(Kind.FREE, "free", None, buffer=temps[-1], phase=phase)


def write_session(path: str | os.PathLike[str], n_events: int, batch: int = 5000) -> int:
    """Write a decode-loop session of about n_events events; returns the number written."""
    writer = SessionWriter(path)
    writer.start(script=_FILE, argv=[_FILE], backend="emulator")
    written = 0
    pending: list[Event] = []
    for ev in decode_events(n_events):
        pending.append(ev)
        if len(pending) >= batch:
            written += writer.add(pending)
            pending.clear()
    written += writer.add(pending)
    writer.finish(SessionStatus.OK, exit_code=0)
    writer.close()
    return written


def bench_folder() -> Path:
    """Where benchmark sessions are cached: $TTRECORD_BENCH_DIR, else a temp subfolder."""
    folder = Path(os.environ.get("TTRECORD_BENCH_DIR") or Path(tempfile.gettempdir()) / "ttrecord-bench")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def cached_session(n_events: int) -> Path:
    """A session of n_events built once per machine and reused by every benchmark."""
    path = bench_folder() / f"decode-{n_events}.db"
    if not path.exists():
        tmp = path.with_suffix(".tmp")
        tmp.unlink(missing_ok=True)
        write_session(tmp, n_events)
        tmp.rename(path)
    return path


def model_run(n_events: int, captures: int = 1_000, replays: int = 100_000,
              live_buffers: int = 5_000) -> SessionBuilder:  # fmt: skip
    """A real model's run as the analysis sees it: `live_buffers` weights allocated up front and
    live throughout, then `captures` rounds of a long eager loop (steps over rotating weights,
    intermediates allocated and freed), a prep run, a capture and `replays // captures`
    replays (copy the input in, execute, read the output), release. About n_events events;
    nothing in it is a hazard, so every rule scans without reporting."""
    b = SessionBuilder(file="/models/model.py")
    b.open_device(line=5)
    base = 0x100000
    weights = [b.alloc(base + i * 0x800) for i in range(live_buffers)]
    x = b.alloc(base + live_buffers * 0x800)
    scratch = base + (live_buffers + 1) * 0x800
    per_round = max(1, replays // captures)
    per_cycle = max(1, (n_events - len(b.events)) // captures)
    k = 0

    def step() -> BufferRef:
        nonlocal k
        prev, temps = x, []
        for i, name in enumerate(_OPS):
            out = b.alloc(scratch + 0x800 * i)
            k += 1
            ins = [prev, weights[(k * 7919) % live_buffers]] if "matmul" in name else [prev]
            b.op(name, ins, [out], line=10 + i, args={"dim": -1} if name == "ttnn.softmax" else None)
            temps.append(out)
            prev = out
        for buf in temps[:-1]:
            b.free(buf)
        return prev

    for _ in range(captures):
        start = len(b.events)
        while len(b.events) - start < per_cycle - 3 * per_round - 45:  # the eager loop
            b.h2d(x, line=30)
            b.d2h(step(), line=20)
            b.free(b.events[-1].inputs[0].buffer)
        b.free(step())  # prep run
        trace = b.begin_trace(line=40)
        out = step()
        b.end_trace(trace, line=42)
        for _ in range(per_round):
            b.h2d(x, line=46)
            b.execute(trace, line=44)
            b.d2h(out, line=48)
        b.release(trace, line=60)
        b.free(out)
    return b


def cached_model_run(n_events: int) -> Path:
    """`model_run(n_events)` written once per machine under `bench_folder()`."""
    path = bench_folder() / f"model-{n_events}.db"
    if not path.exists():
        tmp = path.with_suffix(".tmp")
        tmp.unlink(missing_ok=True)
        model_run(n_events).write(tmp, script="/models/model.py")
        tmp.rename(path)
    return path


def cached_cycles(n_events: int) -> Path:
    """`check_speed.build(n_events)` (20 capture cycles with long replay loops), cached."""
    from benchmarks import check_speed

    path = bench_folder() / f"cycles-{n_events}.db"
    if not path.exists():
        tmp = path.with_suffix(".tmp")
        tmp.unlink(missing_ok=True)
        check_speed.build(n_events).write(tmp, script="/models/decoder.py")
        tmp.rename(path)
    return path


def two_queue_run(n_events: int, captures: int = 1_000, replays: int = 100_000,
                  live_buffers: int = 5_000, missing_wait: bool = False) -> SessionBuilder:  # fmt: skip
    """`model_run`'s shape with tt_cnn's overlapped-input executor as the replay loop: each
    replay writes the input on CQ 1 (after waiting for the previous replay), records an event,
    CQ 0 waits for it, replays without blocking, records an event and reads the output
    (blocking, CQ 0). With `missing_wait` CQ 0 never waits for the write: one TR012 race per
    replay, all at one line (TR012's worst case: every replay is unordered with a write)."""
    b = SessionBuilder(file="/models/model.py")
    b.open_device(line=5)
    base = 0x100000
    weights = [b.alloc(base + i * 0x800) for i in range(live_buffers)]
    x = b.alloc(base + live_buffers * 0x800)
    scratch = base + (live_buffers + 1) * 0x800
    per_round = max(1, replays // captures)
    per_cycle = max(1, (n_events - len(b.events)) // captures)
    k = 0
    events = 0

    def step() -> BufferRef:
        nonlocal k
        prev, temps = x, []
        for i, name in enumerate(_OPS):
            out = b.alloc(scratch + 0x800 * i)
            k += 1
            ins = [prev, weights[(k * 7919) % live_buffers]] if "matmul" in name else [prev]
            b.op(name, ins, [out], line=10 + i)
            temps.append(out)
            prev = out
        for buf in temps[:-1]:
            b.free(buf)
        return prev

    def sync(name: str, line: int, queue: dict, device: int | None = 0) -> None:
        b._add(Kind.SYNC, name, line, device=device, args={"queue": queue})

    def event(cq: int) -> str:
        nonlocal events
        events += 1
        return f"{events} MeshEvent(id=0, device_id=0, mesh_cq_id={cq})"

    for _ in range(captures):
        start = len(b.events)
        while len(b.events) - start < per_cycle - 7 * per_round - 45:  # the eager loop
            b.h2d(x, line=30)
            b.d2h(step(), line=20)
            b.free(b.events[-1].inputs[0].buffer)
        b.free(step())  # prep run
        trace = b.begin_trace(line=40)
        out = step()
        b.end_trace(trace, line=42)
        op_event = event(0)
        sync("ttnn.record_event", 43, {"cq": 0, "event": op_event})
        for _ in range(per_round):
            sync("ttnn.wait_for_event", 45, {"cq": 1, "event": op_event}, device=None)
            b.h2d(x, line=46, cq=1, args={"queue": {"cq": 1}})
            write_event = event(1)
            sync("ttnn.record_event", 47, {"cq": 1, "event": write_event})
            if not missing_wait:
                sync("ttnn.wait_for_event", 48, {"cq": 0, "event": write_event}, device=None)
            b._add(Kind.TRACE_EXECUTE, "execute_trace", 44, trace=trace, phase=Phase.REPLAY, cq=0,
                   args={"queue": {"cq": 0, "blocking": False}})  # fmt: skip
            op_event = event(0)
            sync("ttnn.record_event", 49, {"cq": 0, "event": op_event})
            b.d2h(out, line=50)
        b.release(trace, line=60)
        b.free(out)
    return b


def cached_two_queue_run(n_events: int, missing_wait: bool = False) -> Path:
    """`two_queue_run(n_events)` written once per machine under `bench_folder()`."""
    path = bench_folder() / f"queues{'-racy' if missing_wait else ''}-{n_events}.db"
    if not path.exists():
        tmp = path.with_suffix(".tmp")
        tmp.unlink(missing_ok=True)
        two_queue_run(n_events, missing_wait=missing_wait).write(tmp, script="/models/model.py")
        tmp.rename(path)
    return path
