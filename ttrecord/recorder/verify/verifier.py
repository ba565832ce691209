"""The hooks the recorder calls around each user call when replays are verified: they keep
the captures (capture.py), the held tensors (holds.py), run the reference before a replay
(shadow.py) and record how the replay compared as a `verify` event."""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING, Any

from ttrecord.events import Kind, Phase
from ttrecord.recorder.records import TENSOR_BUFFER, new_point
from ttrecord.recorder.verify import shadow
from ttrecord.recorder.verify.capture import Key, TraceRecord, add_op, pend
from ttrecord.recorder.verify.compare import difference
from ttrecord.recorder.verify.holds import Holds, alive
from ttrecord.recorder.verify.mesh import read as read_chips
from ttrecord.recorder.verify.shadow import Quiet

if TYPE_CHECKING:
    from ttrecord.recorder.recorder import CallState

_CAPTURE = Phase.CAPTURE.value


class Verifier:
    def __init__(self, recorder: Any) -> None:
        self.recorder = recorder
        self.ttnn = recorder.ttnn  # the real module
        self.holds = Holds()
        self._traces: dict[tuple, TraceRecord] = {}
        self._capturing: dict[int | None, TraceRecord] = {}
        self._lock = threading.RLock()  # threads share the holds and the traces

    def sweep(self) -> None:
        with self._lock:
            self.holds.sweep()

    def drop_all(self) -> None:
        """Stop verifying: let go of every tensor held for it."""
        with self._lock:
            self.holds.drop_all()
            self._traces.clear()
            self._capturing.clear()

    def before(self, tl: Any, kind: Any, args: tuple, kwargs: dict, instance: Any) -> Any:
        """Runs before the recorder looks at a user call; returns what `after` needs."""
        with self._lock:
            if self.holds:
                self.holds.sweep()
            if kind is Kind.OP and self._capturing:
                describe, T = self.recorder.tensors.describe, self.recorder.tensor_type
                return tuple(pend(v, T, describe) for v in (instance, args, kwargs))
            if kind is Kind.TRACE_EXECUTE:
                return self._prepare(tl, args, kwargs)
            if kind is Kind.DEVICE_CLOSE:
                self.holds.drop_all()
            return None

    def after(self, tl: Any, state: CallState, pending: Any, name: str, wrapped: Any, result: Any) -> None:
        """Runs after a user call returned (not after one that raised)."""
        seq, kind, phase, trace, device = state.seq, state.kind, state.phase, state.trace, state.device
        with self._lock:
            if kind is Kind.OP and phase == _CAPTURE:
                rec = self._capturing.get(device)
                if rec is not None and pending is not None:
                    add_op(rec, self.holds, seq, name, wrapped, pending, self._device_tensors(result))
                return
            if kind is Kind.TRACE_BEGIN:
                trace = _int(result)
                self._capturing[device] = self._traces[(device, trace)] = TraceRecord(device, trace)
            elif kind is Kind.TRACE_END:
                rec = self._capturing.pop(device, None)
                if rec is not None:
                    rec.complete = True
                    with Quiet(tl):
                        self._baseline(rec)
            elif kind is Kind.TRACE_EXECUTE:
                if pending is not None:
                    with Quiet(tl):
                        self._finish(tl, seq, pending)
                return
            elif kind is Kind.TRACE_RELEASE:
                self._traces.pop((device, trace), None)
            if self._traces:  # made while a trace exists: may sit on memory a replay writes
                for out, _ in self._device_tensors(result):
                    self.holds.hold(out)

    # -- helpers -------------------------------------------------------------------------

    def _tensors(self, result: Any) -> list:
        T = self.recorder.tensor_type
        if type(result) is T:
            return [result]
        if type(result) in (list, tuple):
            return [r for r in result if type(r) is T]
        return []

    def _device_tensors(self, result: Any) -> list[tuple[Any, tuple]]:
        describe = self.recorder.tensors.describe
        return [(t, buf) for t in self._tensors(result) if (buf := describe(t)[TENSOR_BUFFER]) is not None]

    def _baseline(self, rec: TraceRecord) -> None:
        for inp in rec.inputs.values():
            obj = alive(inp.held, inp.buf)
            if obj is not None:
                try:
                    inp.baseline = read_chips(self.ttnn, obj)
                except Exception as exc:
                    rec.problem = f"could not read a captured input ({type(exc).__name__}: {exc})"

    def _occupant(self, inp: Any) -> Any:
        """The tensor on a captured input's exact range now, when the captured tensor itself
        is gone: the trace reads the range, whatever tensor holds it (tt-metal's executors free
        the input and allocate one of the same spec). It becomes the input from here on."""
        describe = self.recorder.tensors.describe
        for h in self.holds.held():
            if h.obj is None:
                continue
            buf = describe(h.obj)[TENSOR_BUFFER]
            if buf is None or tuple(buf[:4]) != tuple(inp.buf[:4]):
                continue
            obj = alive(h, buf)
            try:
                same = (obj is not None and obj.dtype == inp.spec["dtype"]
                        and obj.layout == inp.spec["layout"]
                        and (inp.shape is None or tuple(obj.shape) == inp.shape))  # fmt: skip
            except Exception:
                same = False
            if same:
                inp.held = h
                return obj
        return None

    # -- a verified replay ---------------------------------------------------------------

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
            return None  # nothing allocated or freed since this trace's last verified replay
        rec.verified_live = live
        check: dict[str, Any] = {"rec": rec, "replay": rec.replays, "t0": time.perf_counter()}
        if rec.problem is not None:
            check["skipped"] = rec.problem
            return check
        with Quiet(tl):
            try:
                self._reference(rec, check)
            except Exception as exc:
                check["skipped"] = f"the eager re-run failed: {type(exc).__name__}: {exc}"
        return check

    def _reference(self, rec: TraceRecord, check: dict) -> None:
        """Read the inputs and the tensors the replay may overwrite, then re-run the ops."""
        def read(t: Any) -> Any:
            return read_chips(self.ttnn, t)

        data: dict[Key, Any] = {}
        freed = []
        for key, inp in rec.inputs.items():
            obj = alive(inp.held, inp.buf) or self._occupant(inp)
            if obj is not None:
                data[key] = read(obj)
            elif inp.baseline is None:
                raise RuntimeError("a captured input was freed before its data was read")
            else:
                data[key] = inp.baseline
                freed.append(inp)
        mine = {id(inp.held) for inp in rec.inputs.values()}
        mine.update(id(o[2]) for o in rec.outputs.values())
        # Another live trace's outputs: its replays rewrite them, so whether this replay's
        # overwrite matters depends on what is read after it (TR010 follows that statically).
        others = {id(o[2]) for r in self._traces.values() if r is not rec for o in r.outputs.values()}
        bystanders = []
        for h in self.holds.held():
            if id(h) in mine or h.obj is None:
                continue
            buf = self.recorder.tensors.describe(h.obj)[TENSOR_BUFFER]
            if buf is None or buf[0] != rec.device:
                continue
            writer = rec.writer_of(buf)
            if writer is not None:
                bystanders.append((h, buf, writer, read(h.obj), id(h) in others))
        check["freed"], check["bystanders"] = freed, bystanders
        check["expected"], check["in_place"] = shadow.run(self.ttnn, rec, data, self._tensors)

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
        recorder.log.defer(new_point(
            seq=recorder.next_seq(), parent=parent, t_ns=time.monotonic_ns() - recorder.t0,
            thread=tl.tid, kind=Kind.VERIFY.value, name="replay_verified",
            phase=Phase.REPLAY.value, device=rec.device, trace=rec.trace, site_id=None, args=args,
            region=region, buffer=None))

    def _compare(self, rec: TraceRecord, check: dict) -> dict[str, Any]:
        def read(t: Any) -> Any:
            return read_chips(self.ttnn, t)

        outputs = []
        for key, expected in check["expected"].items():
            index, pos, held, buf = rec.outputs[key]
            obj = alive(held, buf)
            if obj is not None and (diff := difference(read(obj), expected)) is not None:
                op = rec.ops[index]
                outputs.append({"op_seq": op.seq, "op": op.name, "position": pos, **_where(buf), **diff})
        written = []
        for key, expected in check["in_place"].items():
            inp = rec.inputs[key]
            obj = alive(inp.held, inp.buf)
            if obj is not None and (diff := difference(read(obj), expected)) is not None:
                written.append({"reader_seq": inp.reader, **_where(inp.buf), **diff})
        corrupted: list[dict[str, Any]] = []
        other_outputs: list[dict[str, Any]] = []
        for held, buf, writer, before, other_trace in check["bystanders"]:
            if held.obj is not None and (diff := difference(read(held.obj), before)) is not None:
                entry = {"writer_seq": writer[4], **_where(buf), **diff}
                (other_outputs if other_trace else corrupted).append(entry)
        outputs.sort(key=lambda o: o["op_seq"])
        return {
            "result": "diverged" if outputs or written or corrupted else "ok",
            "compared": {"outputs": len(check["expected"]), "inputs": len(rec.inputs),
                         "bystanders": len(check["bystanders"]), "ops": len(rec.ops)},  # fmt: skip
            "outputs": outputs,
            "inputs_written": written,
            "corrupted": corrupted,
            "other_trace_outputs": other_outputs,  # overwritten outputs of another live trace
            "freed_inputs": [{"reader_seq": inp.reader, **_where(inp.buf)} for inp in check["freed"]],
        }


def _int(value: Any) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def _where(buf: tuple) -> dict[str, Any]:
    return {"device": buf[0], "buffer_type": buf[1], "address": buf[2], "size": buf[3]}
