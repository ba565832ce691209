"""Replay verification (`ttrecord run --verify-replay`): a replay must compute what its ops
compute eagerly on the same inputs, and write nothing else.

The reference is a shadow run, not the program's own prep run: keeping the prep run's outputs
alive until the first replay would move the very addresses the check is about. At a verified
replay the verifier copies the data of the trace's captured inputs into fresh buffers, runs the
captured ops eagerly on the copies, reads their results and frees everything it made (the
allocator is back where it was); then the replay runs and the verifier compares
- every trace output the program still holds with the shadow output of the op that wrote it;
- every captured input an op changes in place (a KV cache) with its shadow copy;
- every other live tensor whose bank-local range overlaps a range the trace writes, before and
  after the replay: a replay must not touch it.
A captured input the program freed is copied from its data at end_trace_capture, which is what
the trace was captured to read. Device memory is read only outside capture: right after
end_trace_capture and around execute_trace.

Verified replays: the first of each trace, and a later one whenever the set of live buffers
changed since that trace's last verified replay, since only an allocation or free can make a
trace that was right go wrong.

`ttnn.Tensor` has no weak references, so the verifier holds the tensors it needs. A held tensor
the program has let go of is dropped at the start of the next ttnn call, before the recorder's
allocator snapshot. Device memory is allocated only inside ttnn calls, so every allocation sees
the free memory it would see without verification, and the recorded addresses are the same.
"""

from __future__ import annotations

import sys
import time
import warnings
from dataclasses import dataclass, field
from typing import Any

from ttrecord.events import Kind, Phase
from ttrecord.recorder.log import RecordType
from ttrecord.recorder.verify_compare import difference

Key = tuple  # (device, buffer type, address)
_getrefcount = sys.getrefcount
_CAPTURE = Phase.CAPTURE.value


class Held:
    """One tensor the verifier keeps alive; `obj` is None once dropped."""

    __slots__ = ("obj",)

    def __init__(self, obj: Any) -> None:
        self.obj = obj


class Slot:
    """A tensor argument in a captured op's arguments: a captured input or an earlier op's
    result (`ref` is the input's key, or (op index, position))."""

    __slots__ = ("input", "ref")

    def __init__(self, is_input: bool, ref: tuple) -> None:
        self.input = is_input
        self.ref = ref


class _Pending:
    """A device tensor argument seen before a call, resolved to a Slot after it."""

    __slots__ = ("obj", "buf")

    def __init__(self, obj: Any, buf: tuple) -> None:
        self.obj = obj
        self.buf = buf


@dataclass
class Input:
    held: Held
    buf: tuple  # (device, buffer type, address, size, ...)
    spec: dict[str, Any]  # what from_torch needs to make a copy
    reader: int  # seq of the first captured op that read it
    baseline: Any = None  # host data at end_trace_capture


@dataclass
class CapturedOp:
    seq: int
    name: str
    fn: Any
    instance: Any
    args: tuple
    kwargs: dict


@dataclass
class TraceRecord:
    device: int | None
    trace: int | None
    ops: list[CapturedOp] = field(default_factory=list)
    inputs: dict[Key, Input] = field(default_factory=dict)
    produced: dict[Key, tuple[int, int]] = field(default_factory=dict)
    outputs: dict[Key, tuple[int, int, Held, tuple]] = field(default_factory=dict)
    writes: list[tuple[int, str, int, int, int]] = field(default_factory=list)  # + op seq
    complete: bool = False
    replays: int = 0
    verified_live: tuple | None = None  # (allocator generation, live buffers)
    problem: str | None = None  # why this trace cannot be re-run


class Verifier:
    """Hooks the recorder calls around every user call when replays are verified."""

    def __init__(self, recorder: Any) -> None:
        self.recorder = recorder
        self.ttnn = recorder.ttnn  # the real module: the verifier's own calls are not recorded
        self._held: dict[int, Held] = {}
        self._traces: dict[tuple, TraceRecord] = {}
        self._capturing: dict[int | None, TraceRecord] = {}
        probe = Held(object())
        self._base = self._refs(probe)  # references a dropped tensor has: ours only

    # -- holding tensors ---------------------------------------------------------------------

    @staticmethod
    def _refs(h: Held) -> int:
        return _getrefcount(h.obj)

    def hold(self, obj: Any) -> Held:
        h = self._held.get(id(obj))
        if h is None:
            h = self._held[id(obj)] = Held(obj)
        return h

    def sweep(self) -> None:
        """Drop the tensors only the verifier still references."""
        base, refs = self._base, self._refs
        gone = [k for k, h in self._held.items() if refs(h) <= base]
        for k in gone:
            self._held.pop(k).obj = None

    def drop_all(self) -> None:
        for h in self._held.values():
            h.obj = None
        self._held.clear()

    # -- hooks ---------------------------------------------------------------------------------

    def before(self, tl: Any, kind: Any, args: tuple, kwargs: dict, instance: Any) -> Any:
        """Runs before the recorder looks at a user call; returns what `after` needs."""
        if self._held:
            self.sweep()
        if kind is Kind.OP and self._capturing:
            return self._pending_args(instance, args, kwargs)
        if kind is Kind.TRACE_EXECUTE:
            return self._prepare(tl, args, kwargs)
        if kind is Kind.DEVICE_CLOSE:
            self.drop_all()
        return None

    def after(self, tl: Any, state: tuple, pending: Any, name: str, wrapped: Any, result: Any) -> None:
        seq, kind, phase, trace, device = state[:5]
        if kind is Kind.OP and phase == _CAPTURE:
            rec = self._capturing.get(device)
            if rec is not None and pending is not None:
                self._captured(rec, seq, name, wrapped, pending, result)
            return
        if kind is Kind.TRACE_BEGIN:
            trace = _int(result)
            rec = self._traces[(device, trace)] = TraceRecord(device, trace)
            self._capturing[device] = rec
        elif kind is Kind.TRACE_END:
            rec = self._capturing.pop(device, None)
            if rec is not None:
                rec.complete = True
                with _Quiet(tl):
                    self._baseline(rec)
        elif kind is Kind.TRACE_EXECUTE:
            if pending is not None:
                with _Quiet(tl):
                    self._finish(tl, seq, pending)
        elif kind is Kind.TRACE_RELEASE:
            self._traces.pop((device, trace), None)
        if self._traces and kind is not Kind.TRACE_EXECUTE:
            self._hold_results(result)

    # -- capture -------------------------------------------------------------------------------

    def _pending_args(self, instance: Any, args: tuple, kwargs: dict) -> tuple:
        return (self._pend(instance), self._pend(args), self._pend(kwargs))

    def _pend(self, value: Any) -> Any:
        t = type(value)
        if isinstance(value, self.recorder.tensor_type):
            buf = self.recorder.tensors.describe(value)[6]
            return value if buf is None else _Pending(value, buf)
        if t is list or t is tuple:
            return t(self._pend(v) for v in value)
        if t is dict:
            return {k: self._pend(v) for k, v in value.items()}
        return value

    def _captured(self, rec: TraceRecord, seq: int, name: str, wrapped: Any, pending: tuple,
                  result: Any) -> None:  # fmt: skip
        if name.endswith("deallocate"):
            return  # frees are what the replay leaves out, not work it repeats
        instance, args, kwargs = (self._slots(rec, p, seq) for p in pending)
        fn = wrapped
        if instance is not None:  # a bound method would keep the captured tensor alive
            fn = getattr(wrapped, "__func__", None)
            if fn is None:
                rec.problem = f"{name} is a method ttrecord cannot call on a copy"
        index = len(rec.ops)
        rec.ops.append(CapturedOp(seq, name, fn, instance, args, kwargs))
        for pos, out in enumerate(self._tensors(result)):
            buf = self.recorder.tensors.describe(out)[6]
            if buf is None:
                continue
            key = buf[:3]
            rec.produced[key] = (index, pos)
            rec.outputs[key] = (index, pos, self.hold(out), buf)
            rec.writes.append((buf[0], buf[1], buf[2], buf[2] + buf[3], seq))

    def _slots(self, rec: TraceRecord, value: Any, seq: int) -> Any:
        t = type(value)
        if t is _Pending:
            key = value.buf[:3]
            made = rec.produced.get(key)
            if made is not None:
                return Slot(False, made)
            if key not in rec.inputs:
                rec.inputs[key] = Input(self.hold(value.obj), value.buf, _spec(value.obj), seq)
            return Slot(True, key)
        if t is list or t is tuple:
            return t(self._slots(rec, v, seq) for v in value)
        if t is dict:
            return {k: self._slots(rec, v, seq) for k, v in value.items()}
        return value

    def _tensors(self, result: Any) -> list:
        T = self.recorder.tensor_type
        if type(result) is T:
            return [result]
        if type(result) in (list, tuple):
            return [r for r in result if type(r) is T]
        return []

    def _hold_results(self, result: Any) -> None:
        """Tensors made while a trace is alive may sit on memory a replay writes."""
        for out in self._tensors(result):
            if self.recorder.tensors.describe(out)[6] is not None:
                self.hold(out)

    def _baseline(self, rec: TraceRecord) -> None:
        for inp in rec.inputs.values():
            obj = self._alive(inp.held, inp.buf)
            if obj is not None:
                try:
                    inp.baseline = self.ttnn.to_torch(obj)
                except Exception as exc:
                    rec.problem = f"could not read a captured input ({type(exc).__name__}: {exc})"

    # -- replay --------------------------------------------------------------------------------

    def _alive(self, held: Held, buf: tuple) -> Any:
        """The held tensor if it still owns the buffer it had at capture."""
        obj = held.obj
        if obj is None:
            return None
        try:
            if not obj.is_allocated() or obj.buffer_address() != buf[2]:
                return None
        except Exception:
            return None
        return obj

    def _prepare(self, tl: Any, args: tuple, kwargs: dict) -> dict | None:
        recorder = self.recorder
        device = recorder.devices.id_of(args[0] if args else kwargs.get("device", kwargs.get("mesh_device")))
        trace = _int(args[1] if len(args) > 1 else kwargs.get("trace_id"))
        rec = self._traces.get((device, trace))
        if rec is None or not rec.complete or self._capturing:
            return None
        rec.replays += 1
        live = (recorder.allocations.generation, frozenset(recorder.allocations.snapshot_keys()))
        if rec.verified_live is not None and live == rec.verified_live:
            return None
        rec.verified_live = live
        check: dict[str, Any] = {"rec": rec, "replay": rec.replays, "t0": time.perf_counter()}
        if rec.problem is not None:
            check["skipped"] = rec.problem
            return check
        with _Quiet(tl):
            try:
                self._reference(rec, check)
            except Exception as exc:
                check["skipped"] = f"the eager re-run failed: {type(exc).__name__}: {exc}"
        return check

    def _reference(self, rec: TraceRecord, check: dict) -> None:
        """Read inputs and bystanders, then run the captured ops eagerly on copies."""
        read = self.ttnn.to_torch
        data: dict[Key, Any] = {}
        freed = []
        for key, inp in rec.inputs.items():
            obj = self._alive(inp.held, inp.buf)
            if obj is not None:
                data[key] = read(obj)
            else:
                if inp.baseline is None:
                    raise RuntimeError("a captured input was freed before its data was read")
                data[key] = inp.baseline
                freed.append(inp)
        mine = {id(inp.held) for inp in rec.inputs.values()}
        mine.update(id(o[2]) for o in rec.outputs.values())
        bystanders = []
        for h in list(self._held.values()):
            if id(h) in mine:
                continue
            buf = self.recorder.tensors.describe(h.obj)[6] if h.obj is not None else None
            if buf is None or buf[0] != rec.device:
                continue
            writer = _writer(rec, buf)
            if writer is not None:
                bystanders.append((h, buf, writer, read(h.obj)))
        check["freed"], check["bystanders"] = freed, bystanders
        check["expected"], check["in_place"] = self._shadow(rec, data)

    def _shadow(self, rec: TraceRecord, data: dict[Key, Any]) -> tuple[dict, dict]:
        """The captured ops run eagerly on copies of the inputs; returns the results of the
        outputs the program holds, and the inputs the ops changed in place."""
        ttnn = self.ttnn
        made: list[Any] = []
        copies: dict[Key, Any] = {}
        results: list[list[Any]] = []

        def resolve(value: Any) -> Any:
            t = type(value)
            if t is Slot:
                return copies[value.ref] if value.input else results[value.ref[0]][value.ref[1]]
            if t is list or t is tuple:
                return t(resolve(v) for v in value)
            if t is dict:
                return {k: resolve(v) for k, v in value.items()}
            return value

        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # the emulator's own allocation warning
                for key, inp in rec.inputs.items():
                    copy = ttnn.from_torch(data[key], **inp.spec)
                    made.append(copy)
                    copies[key] = copy
                for op in rec.ops:
                    if op.instance is not None:
                        out = op.fn(resolve(op.instance), *resolve(op.args), **resolve(op.kwargs))
                    else:
                        out = op.fn(*resolve(op.args), **resolve(op.kwargs))
                    outs = self._tensors(out)
                    made.extend(outs)
                    results.append(outs)
            read = ttnn.to_torch
            expected = {}
            for key, (index, pos, held, buf) in rec.outputs.items():
                if self._alive(held, buf) is not None:
                    expected[key] = read(results[index][pos])
            in_place = {}
            for key, copy in copies.items():
                after = read(copy)
                if difference(after, data[key]) is not None:
                    in_place[key] = after
            return expected, in_place
        finally:
            for t in made:
                try:
                    ttnn.deallocate(t)
                except Exception:
                    pass

    def _finish(self, tl: Any, parent: int, check: dict) -> None:
        rec: TraceRecord = check["rec"]
        args: dict[str, Any] = {"trace": rec.trace, "replay": check["replay"]}
        if "skipped" in check:
            args.update(result="skipped", reason=check["skipped"])
        else:
            try:
                args.update(self._compare(rec, check))
            except Exception as exc:
                args.update(result="skipped", reason=f"reading the replay failed: {type(exc).__name__}: {exc}")
        args["ms"] = round((time.perf_counter() - check["t0"]) * 1000, 3)
        recorder = self.recorder
        region = tl.regions[-1] if tl.regions else None
        recorder.log.defer((RecordType.POINT, recorder.next_seq(), parent, time.monotonic_ns() - recorder.t0,
                            tl.tid, Kind.VERIFY.value, "replay_verified", Phase.REPLAY.value, rec.device,
                            rec.trace, None, args, region, None))  # fmt: skip

    def _compare(self, rec: TraceRecord, check: dict) -> dict[str, Any]:
        read = self.ttnn.to_torch
        outputs = []
        for key, expected in check["expected"].items():
            index, pos, held, buf = rec.outputs[key]
            obj = self._alive(held, buf)
            if obj is None:
                continue
            diff = difference(read(obj), expected)
            if diff is not None:
                op = rec.ops[index]
                outputs.append({"op_seq": op.seq, "op": op.name, "position": pos, **_where(buf), **diff})
        written = []
        for key, expected in check["in_place"].items():
            inp = rec.inputs[key]
            obj = self._alive(inp.held, inp.buf)
            if obj is None:
                continue
            diff = difference(read(obj), expected)
            if diff is not None:
                written.append({"reader_seq": inp.reader, **_where(inp.buf), **diff})
        corrupted = []
        for held, buf, writer, before in check["bystanders"]:
            if held.obj is None:
                continue
            diff = difference(read(held.obj), before)
            if diff is not None:
                corrupted.append({"writer_seq": writer[4], **_where(buf), **diff})
        freed = [{"reader_seq": inp.reader, **_where(inp.buf)} for inp in check["freed"]]
        outputs.sort(key=lambda o: o["op_seq"])
        diverged = bool(outputs or written or corrupted)
        return {
            "result": "diverged" if diverged else "ok",
            "compared": {"outputs": len(check["expected"]), "inputs": len(rec.inputs),
                         "bystanders": len(check["bystanders"]), "ops": len(rec.ops)},  # fmt: skip
            "outputs": outputs,
            "inputs_written": written,
            "corrupted": corrupted,
            "freed_inputs": freed,
        }


class _Quiet:
    """The verifier's own ttnn calls (reads, copies, the eager re-run) are not recorded: the
    recorder treats a call made while `tl.call` is 0 as internal and passes it through."""

    __slots__ = ("tl", "saved")

    def __init__(self, tl: Any) -> None:
        self.tl = tl

    def __enter__(self) -> None:
        self.saved = self.tl.call
        self.tl.call = 0

    def __exit__(self, *exc: Any) -> None:
        self.tl.call = self.saved


def _int(value: Any) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def _spec(obj: Any) -> dict[str, Any]:
    return {"dtype": obj.dtype, "layout": obj.layout, "device": obj.device(),
            "memory_config": obj.memory_config()}  # fmt: skip


def _writer(rec: TraceRecord, buf: tuple) -> tuple | None:
    """The first captured write that overlaps `buf`'s bank-local range, if any."""
    device, btype, start, end = buf[0], buf[1], buf[2], buf[2] + buf[3]
    for w in rec.writes:
        if w[0] == device and w[1] == btype and w[2] < end and start < w[3]:
            return w
    return None


def _where(buf: tuple) -> dict[str, Any]:
    return {"device": buf[0], "buffer_type": buf[1], "address": buf[2], "size": buf[3]}
